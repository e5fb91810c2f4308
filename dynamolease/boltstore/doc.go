// Package boltstore is the embedded lease store: a dynamolease.Table in a
// bbolt file under data_dir, for one s3cond process (lease.store embedded).
// bbolt locks the file, so a second process cannot open it (guard.go);
// lease writes are group-committed (commit.go) and survive the process.
// A file that cannot be trusted after a machine restart, or one replaced
// or removed while stopped, is discarded and every lease it may have held
// waited out (durability.go, identity.go) for the longest lease recorded
// (longest.go), a pause a restart keeps (pause.go); a corrupt one is refused before
// bbolt reads it (pagewalk.go). Expired rows are swept (sweep.go). For
// `s3cond leases`, ReadLeaseFile and ReleaseInLeaseFile read and release
// rows of the file while no s3cond holds it (list.go).
package boltstore
