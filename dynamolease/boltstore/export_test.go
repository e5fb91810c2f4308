package boltstore

import bolt "go.etcd.io/bbolt"

// PutRawRow stores v as the row (path, etag) unchecked, as someone editing
// the lease file by hand would.
func (b *Table) PutRawRow(path, etag string, v []byte) error {
	return b.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(leaseBucket).Put(boltKey(path, etag), v) })
}
