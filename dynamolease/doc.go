// Package dynamolease is s3cond's lease protocol (SPEC §3): before a
// conditional write on a key, a proxy takes a lease on (path, expected ETag)
// in a table that every proxy shares, and, with the arrow-rs key format,
// Apache arrow-rs object_store clients of one bucket too.
//
// The package is the protocol alone, over the Table interface, with an
// in-memory table: it depends on no store's client. Each store is a package
// beneath it (dynamostore, boltstore, etcdstore), and internal/leasestore
// chooses one from the config. A store's failures reach the caller as the protocol's errors
// (refusal.go).
//
// # Record schema
//
// One row per (path, etag), the schema of arrow-rs's DynamoDB commit table:
//
//   - path (S, partition key): "<bucket>/<key>" (KeyFormatBucketKey, the
//     default), or the key alone as arrow-rs names it (KeyFormatArrowRS:
//     arrow-rs's Path is relative to the bucket; one bucket per table);
//   - etag (S, sort key): the expected ETag exactly as S3 returns it in the
//     ETag header, surrounding double quotes included (e.g. "\"9b2cf5...\""),
//     or "*" for a create. arrow-rs writes the ETag it read from a HEAD
//     response unchanged, so both writers meet on the same row;
//   - generation (N): bumped by every takeover and renewal;
//   - timeout (N): lease length in milliseconds, as the holder chose it;
//   - ttl (N): epoch seconds after which DynamoDB's TTL may remove the row;
//   - owner (S), released (BOOL): s3cond's additions. arrow-rs neither writes
//     nor reads them, so a row it wrote reads as unreleased with no owner.
//   - key_state (S): on a released row in strict mode, the key's state its
//     holder left ("absent", or "exists " and the ETag: keystate.go); never
//     on arrow-rs keyed rows.
//   - receipt (S): on a released row, the answer a holder's write got, for
//     that write's retries (receipt.go), after the Unix milliseconds it was
//     recorded at; later holders that do not commit write it back on their
//     release, until Options.TTL after that time. A row whose sort key
//     starts "receipt " carries one and is no lease.
//
// RenameObject keeps rows of its own in the same table, sort keys starting
// with "#" (no ETag as S3 returns it does): a key's rename lock, its
// rename intent, and client tokens, whose text rides in key_state
// (renamenotes.go).
//
// # Protocol
//
// Acquire creates the row with a random first generation (generation.go:
// a row that vanished and was created anew never meets a takeover aimed at
// the old one). If it exists, the caller waits
// while the holder's lease is live, re-checking its precondition every poll
// interval, and takes the row over (generation+1, conditional on the
// generation it saw and on the rest of the row as it saw it: fence.go, for
// rows born at 0 by arrow-rs or an older s3cond) once timeout ×
// MaxClockSkewRate has passed on the local
// monotonic clock since this process first saw that version of the row, or
// at once if the holder marked it released. The first sighting counts across
// Acquire calls (sightings.go): a holder that crashed is taken over timeout ×
// MaxClockSkewRate after the process first saw its row, by whichever call is
// waiting then or comes next, however short each call's WaitBudget. Holding the lease it re-checks the precondition once
// more: that re-check is what makes taking over a released lease safe.
// Records are never deleted (TTL removes them): deleting one would let a
// writer that checked the object before the last write landed take a fresh
// lease and overwrite it.
//
// Waiters in one process on the same key queue locally, so only one of them
// talks to the table, and are woken the moment a local holder releases.
//
// A lease is only as safe as its margins: the backend cannot check a fencing
// token, so a holder must finish its write before Lease.Deadline (measured
// from a time read before the table request was sent) and renew, or stop,
// before then.
package dynamolease
