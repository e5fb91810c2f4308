package dynamolease

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
