package proxy

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// serveConditional handles PutObject, CopyObject, CompleteMultipartUpload
// and DeleteObject carrying If-Match / If-None-Match, and in strict mode
// every such write. It returns false when the call needs no lease and should
// simply be forwarded. The leased write itself is proxy/leasedwrite's.
func (p *Proxy) serveConditional(c *call) bool {
	var conds precondition.Conditions
	var err error
	if c.op == operation.DeleteObject {
		conds, err = precondition.ParseDelete(c.r.Header)
	} else {
		conds, err = precondition.ParseWrite(c.r.Header)
	}
	var added bool
	if err == nil {
		conds, added, err = p.policyConditions(c, conds) // writepolicy.go
	}
	if err == nil && c.op == operation.DeleteObject && conds.Active() && c.backend.RefuseConditionalDeletes {
		err = conditionalDeleteRefused()
	}
	if err != nil {
		p.fail(c, err)
		return true
	}
	mode := c.backend.mode()
	if mode.EmulateCopy && c.op == operation.CopyObject && conds.Active() {
		p.emulateCopy(c, conds) // emulatedcopy.go: the store's own check, no lease
		return true
	}
	var cond leasedwrite.Condition = conds
	switch {
	case !conds.Active() && (!mode.Leases() || p.leased == nil || !p.serializeAllWrites(c.target.Bucket)):
		return false
	case !conds.Active():
		cond = precondition.AnyState{}
	case !mode.Leases():
		p.serveLeaseFree(c, conds, mode, added) // leasefree.go
		return true
	case p.leased == nil:
		p.fail(c, s3err.Newf(s3err.NotImplemented, "Conditional writes need a lease store, and none is configured."))
		return true
	}
	markLeased(c)
	receiptRow, _ := conds.LeaseETagUnread()
	p.leased.Run(p.leasedRequest(c, mode), cond, &leasedSender{p: p, c: c, spec: p.clientBody(c), receiptRow: receiptRow})
	return true
}

// WriteEnd and LeasedWriteObserver are proxy/leasedwrite's: a
// RequestObserver that also implements LeasedWriteObserver is told about
// leased writes whose client left or whose outcome is unknown.
type (
	WriteEnd            = leasedwrite.WriteEnd
	LeasedWriteObserver = leasedwrite.LeasedWriteObserver
)

// WaitForReleases waits until every lease release started in the
// background has finished, or ctx ends (leasedwrite.Writer.WaitForReleases).
// Call it after the server has stopped and before the lease store closes.
func (p *Proxy) WaitForReleases(ctx context.Context) error {
	if p.leased == nil {
		return nil
	}
	return p.leased.WaitForReleases(ctx)
}

// leasedRequest describes c to proxy/leasedwrite.
func (p *Proxy) leasedRequest(c *call, mode leasedwrite.Mode) leasedwrite.Request {
	req := leasedwrite.Request{
		ID: c.id, Op: c.op, Target: c.target, Ctx: c.r.Context(), Mode: mode,
		LeasePath: c.backend.leasePath, ClientBodyLength: c.auth.Body.Length(), Backend: c.backend.Name,
		State: callState{c: c},
		KeyTarget: func(key string) operation.Target {
			return operation.Target{Bucket: c.target.Bucket, Key: key, RawKey: escapeKey(key)}
		},
		LeaseWait: func(wait time.Duration) { c.info.set(func(i *requestInfo) { i.leaseWait = wait }) },
		Strict:    p.serializeAllWrites(c.target.Bucket) && mode.RecordsKeyStates(),
		Receipt:   p.receiptOf(c),
	}
	if p.leaseOptions.Leases != nil {
		req.Renames = renameStore{b: c.backend, bucket: c.target.Bucket} // renamestore.go
	}
	return req
}

// leasePath is the lease table's partition key: the backend bucket and the
// object the backend will write (KeyPolicy.LeaseKey), so every s3cond in a
// fleet, whatever its bucket mapping, agrees.
func (b *Backend) leasePath(t operation.Target) string {
	return b.BackendBucket(t.Bucket) + "/" + b.KeyPolicy.LeaseKey(t.Key)
}

// leasedSender sends a leased write's one request (leasedwrite.Sender):
// forward with the guard's hooks, the client's body as clientBody made it.
type leasedSender struct {
	p    *Proxy
	c    *call
	spec forwardSpec
	// receiptRow is the lease row the write's condition names, whose
	// receipt a retry may be given (receipt.go); empty: none.
	receiptRow string
}

func (s *leasedSender) BodyLength() int64 { return s.spec.length }

func (s *leasedSender) BufferBody() error {
	body, err := readWhole(s.spec.body, s.spec.length)
	if err != nil {
		return err
	}
	s.spec.body = bytes.NewReader(body)
	return nil
}

// Send forwards the write through a detachedWriter: once it reached the
// store it runs to its end whatever the client does. The answer goes to the
// client now, not after the lease's release: the write is done, and the
// next write on this key (which expects the new ETag, so takes another
// lease row) need not wait for the release commit. Writers still waiting
// on this row expect the old ETag and fail their check either way.
func (s *leasedSender) Send(g leasedwrite.Guard) bool {
	spec := s.spec
	spec.guard = g
	res := s.p.forward(s.c.detached(), spec)
	_ = http.NewResponseController(s.c.w).Flush()
	if g.Answered != nil && res.status != 0 && !s.c.r.URL.Query().Has("versionId") {
		// A write of one version by its id says nothing of the key's
		// current version.
		g.Answered(res.status, res.header)
	}
	return res.status != 0
}

func (s *leasedSender) Fail(err error) {
	if s.p.answerRetry(s.c, s.receiptRow, err) {
		return
	}
	s.p.fail(s.c, err)
}

// deleteSender sends a DeleteObjects' entries (leasedwrite.DeleteSender).
type deleteSender struct {
	p *Proxy
	c *call
}

func (s deleteSender) Delete(ctx context.Context, entries []s3xml.ObjectIdentifier, result *s3xml.DeleteResult) (bool, error) {
	backendResult, answered, err := s.p.deleteOnBackend(s.c, ctx, distinctEntries(entries))
	if err != nil {
		return answered, err
	}
	answerEntries(entries, backendResult, result)
	return answered, nil
}
