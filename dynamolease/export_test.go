package dynamolease

import bolt "go.etcd.io/bbolt"

// LocalContenders is how many goroutines of c are acquiring or holding the
// lease on (path, etag): tests wait for their waiters to queue with it
// instead of sleeping.
func (c *Committer) LocalContenders(path, etag string) int {
	c.local.mu.Lock()
	defer c.local.mu.Unlock()
	if st := c.local.keys[localKey{path, etag}]; st != nil {
		return st.refs
	}
	return 0
}

// PutRawRow stores v as the row (path, etag) unchecked, as someone editing
// the lease file by hand would.
func (b *BoltTable) PutRawRow(path, etag string, v []byte) error {
	return b.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(leaseBucket).Put(boltKey(path, etag), v) })
}
