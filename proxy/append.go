package proxy

import (
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"

	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// Append (docs/spec.md, "Append"): a PutObject with x-amz-write-offset-bytes
// equal to the object's size adds its body to the object's end, as S3
// Express One Zone does. No store but S3 Express has it, so s3cond builds it
// from the store's own writes, under the key's lease: a missing object
// (offset 0) is a create (append_send.go); a small one is read and
// rewritten with its new bytes (append_rewrite.go); a large one is copied
// on the store by UploadPartCopy ranges into a multipart upload with the
// new bytes as its last part (append_multipart.go). Racing appends at one
// offset contend for one lease row (the version they extend): one wins,
// the others then find another size and answer InvalidWriteOffset.

// headerWriteOffset is the append's header, canonical.
const headerWriteOffset = "X-Amz-Write-Offset-Bytes"

// maxObjectSize is S3's largest object (5 TiB): an append past it is
// refused as S3 refuses an upload that would exceed it.
const maxObjectSize = 5 << 40

// maxObjectParts is S3's limit of parts in one object: each append adds
// one, and an object past it answers TooManyParts.
const maxObjectParts = 10_000

// parseWriteOffset reads x-amz-write-offset-bytes: ok is false when the
// request is no append. A presigned URL carrying it as a query parameter is
// refused with S3's 501: s3cond's append reads the header only, and a
// store would ignore the parameter and replace the object.
func parseWriteOffset(h http.Header, query map[string][]string) (offset int64, ok bool, err error) {
	for name := range query {
		if textproto.CanonicalMIMEHeaderKey(name) == headerWriteOffset {
			return 0, false, s3err.Newf(s3err.NotImplemented,
				"x-amz-write-offset-bytes is implemented as a header only, not as a query parameter.")
		}
	}
	values, present := h[headerWriteOffset]
	if !present {
		return 0, false, nil
	}
	if len(values) != 1 {
		return 0, false, argumentError("The header x-amz-write-offset-bytes is given more than once", "x-amz-write-offset-bytes", values[0])
	}
	raw := strings.TrimSpace(values[0])
	offset, perr := strconv.ParseInt(raw, 10, 64)
	if perr != nil || offset < 0 || raw == "" || raw[0] == '+' {
		return 0, false, argumentError("x-amz-write-offset-bytes must be a non-negative integer", "x-amz-write-offset-bytes", values[0])
	}
	return offset, true, nil
}

// checkAppendBounds refuses an append S3 would refuse for its sizes: one
// whose result would exceed S3's largest object. (A body over 5 GB is
// refused for every PutObject, admit.)
func checkAppendBounds(offset, length int64) error {
	switch {
	case length < 0:
		return s3err.New(s3err.MissingContentLength)
	case offset > maxObjectSize-length:
		return s3err.New(s3err.EntityTooLarge).With("ProposedSize", strconv.FormatInt(offset, 10)+"+"+strconv.FormatInt(length, 10)).
			With("MaxSizeAllowed", strconv.FormatInt(maxObjectSize, 10))
	}
	return nil
}

// objectParts is how many parts an object counts toward S3's 10,000 on
// append: its multipart ETag's part count ("…-N"), else 1. s3cond keeps no
// count of appends of its own (it would have to hide it in the object's
// metadata): an object it built counts the parts it was assembled from
// (docs/spec.md, "Append").
func objectParts(etag string) int {
	etag = strings.Trim(etag, `"`)
	i := strings.LastIndexByte(etag, '-')
	if i < 0 {
		return 1
	}
	n, err := strconv.Atoi(etag[i+1:])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// appendCondition is an append's condition for proxy/leasedwrite: the
// client's If-Match / If-None-Match, then the offset equal to the object's
// size, then the part limit. The first state it passes is pinned: the
// bytes the append keeps are that version's, so a later check (the
// re-check under the lease) that finds another version refuses, even one
// of the same size.
type appendCondition struct {
	client precondition.Conditions
	offset int64

	mu     sync.Mutex
	pinned *precondition.ObjectState
}

var _ leasedwrite.Condition = (*appendCondition)(nil)

func (a *appendCondition) Evaluate(s precondition.ObjectState) error {
	if err := a.client.Evaluate(s); err != nil {
		return err
	}
	size := int64(0)
	if s.Exists {
		size = s.Size
	}
	if size != a.offset {
		return s3err.New(s3err.InvalidWriteOffset)
	}
	if s.Exists && objectParts(s.ETag) >= maxObjectParts {
		return s3err.New(s3err.TooManyParts)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pinned == nil {
		pinned := s
		a.pinned = &pinned
		return nil
	}
	if a.pinned.Exists != s.Exists || (s.Exists && !precondition.ETagsEqual(a.pinned.ETag, s.ETag)) {
		return s3err.Newf(s3err.ConditionalRequestConflict,
			"The object was replaced by one of the same size while the append was prepared; retry.")
	}
	return nil
}

// LeaseETag leases the version the append extends: "*" (a create's row)
// for a missing object, else its ETag, so an append contends with every
// conditional write on that version.
func (a *appendCondition) LeaseETag(s precondition.ObjectState) string {
	if !s.Exists {
		return "*"
	}
	return precondition.CanonicalETag(s.ETag)
}

func (a *appendCondition) Covers(leaseETag string, s precondition.ObjectState) bool {
	if leaseETag == "*" {
		return !s.Exists
	}
	return s.Exists && precondition.ETagsEqual(leaseETag, s.ETag)
}

// pinnedState is the version the append extends (zero before any check).
func (a *appendCondition) pinnedState() precondition.ObjectState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pinned == nil {
		return precondition.ObjectState{}
	}
	return *a.pinned
}

// serveAppend serves c if it is an append, and reports whether it was.
func (p *Proxy) serveAppend(c *call) bool {
	offset, ok, err := parseWriteOffset(c.r.Header, c.parsedQuery)
	if err == nil && !ok {
		return false
	}
	var client precondition.Conditions
	if err == nil {
		client, err = precondition.ParseWrite(c.r.Header)
	}
	if err == nil {
		// An append is a PutObject to the bucket's write policy, as to
		// S3's condition keys: without If-Match / If-None-Match it is
		// refused where conditions are required, and taken as a create
		// under create_only (writepolicy.go).
		client, _, err = p.policyConditions(c, client)
	}
	if err == nil {
		err = checkAppendBounds(offset, c.auth.Body.Length())
	}
	if err != nil {
		p.fail(c, err)
		return true
	}
	cond := &appendCondition{client: client, offset: offset}
	mode := c.backend.mode()
	send := &appendSender{p: p, c: c, cond: cond, offset: offset, mode: mode,
		body: c.auth.Body, length: c.auth.Body.Length()}
	switch {
	case !mode.Leases():
		p.appendLeaseFree(c, cond, send)
	case p.leased == nil:
		p.fail(c, s3err.Newf(s3err.NotImplemented, "Appends need a lease store, and none is configured."))
	default:
		markLeased(c)
		req := p.leasedRequest(c, mode)
		if offset > appendBufferedLimit {
			// A multipart upload: its completion assembles the whole
			// object on the store, which goes on after this s3cond.
			req.StoreWork = offset + send.length
		}
		p.leased.Run(req, cond, send)
	}
	return true
}

// appendLeaseFree serves an append on a store served natively (no write
// takes a lease there): the store's own atomic check of the final write
// (If-Match on the version read, If-None-Match: * for a create) makes it
// atomic, as the emulated copy's does.
func (p *Proxy) appendLeaseFree(c *call, cond *appendCondition, send *appendSender) {
	state, err := c.backend.head(c.r.Context(), c.target)
	if err == nil {
		err = cond.Evaluate(state)
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	send.Send(leasedwrite.Guard{Ctx: c.r.Context(), Enforced: true})
}

// refusedConflict is the answer to an append whose final write the store
// refused on its condition: the object changed since s3cond read it. A
// new size makes the offset wrong; the same size is a conflict to retry.
func (p *Proxy) refusedConflict(c *call, cond *appendCondition) error {
	state, err := c.backend.head(c.r.Context(), c.target)
	if err != nil {
		return err
	}
	if !state.Exists {
		state.Size = 0
	}
	if state.Size != cond.offset {
		return s3err.New(s3err.InvalidWriteOffset)
	}
	return s3err.Newf(s3err.ConditionalRequestConflict, "The object changed while the append was written; retry.")
}
