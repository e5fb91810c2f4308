package precondition

// HasSizeOrTime reports whether a DeleteObject's x-amz-if-match-size or
// x-amz-if-match-last-modified-time is present: the conditions a store may
// ignore while it checks If-Match atomically (SeaweedFS 4.53), which s3cond
// then reduces to an If-Match of the ETag it read.
func (c Conditions) HasSizeOrTime() bool { return c.deleteIf.active() }
