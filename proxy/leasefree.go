package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// serveLeaseFree sends a conditional write on a backend served without
// leases, under its operation's rule (leasedwrite.Rule): as the client sent
// it where the store checks every condition itself; with If-Match's ETags
// unquoted for a store that matches only those; or reduced to If-Match of
// the ETag a HEAD read, for a DeleteObject whose size or time conditions
// the store ignores.
func (p *Proxy) serveLeaseFree(c *call, conds precondition.Conditions, mode leasedwrite.Mode, added bool) {
	spec := p.nativeSpec(c, added)
	switch rule := mode.Rule(c.op); {
	case rule == leasedwrite.RuleUnquoted && len(conds.ETags()) > 0:
		spec.guard.Enforced = true
		spec.guard.StoreCondition = http.Header{precondition.HeaderIfMatch: {unquotedETags(conds.ETags())}}
	case rule == leasedwrite.RuleIfMatch && conds.HasSizeOrTime():
		p.serveReducedDelete(c, conds)
		return
	}
	p.forward(c, spec)
}

// unquotedETags is an If-Match list with every ETag's quotes taken off.
func unquotedETags(etags []string) string {
	for i, e := range etags {
		etags[i] = strings.Trim(e, `"`)
	}
	return strings.Join(etags, ", ")
}

// reducedAttempts bounds how often a reduced write reads the state again
// after the store refused the ETag it read (the object changed in
// between); then it answers 409 ConditionalRequestConflict, as S3 does to
// a conditional write that met a concurrent one, and the client retries.
const reducedAttempts = 4

// reduceToIfMatch evaluates conds on t's state read by a HEAD and, where
// they hold on an object, sends the write with If-Match: <the ETag read>
// (send): the store's atomic ETag check makes the whole atomic. The
// store's 412 or 404 means the object changed after the HEAD: the state is
// read again. It returns the store's answer to relay (the caller closes
// it); or the error to answer, from the state read (linearized at the
// HEAD); or neither when there is no object to delete (S3's 204: nothing
// was written, at the HEAD).
func reduceToIfMatch(ctx context.Context, b *Backend, t operation.Target, conds precondition.Conditions,
	send func(etag string) (*http.Response, error)) (*http.Response, error) {
	for range reducedAttempts {
		state, err := b.head(ctx, t)
		if err != nil {
			return nil, err
		}
		if err := conds.Evaluate(state); err != nil {
			return nil, err
		}
		if !state.Exists {
			return nil, nil
		}
		resp, err := send(state.ETag)
		if err != nil {
			return nil, backendError(err)
		}
		if resp.StatusCode != http.StatusPreconditionFailed && resp.StatusCode != http.StatusNotFound {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDeleteBody))
		resp.Body.Close()
	}
	return nil, s3err.New(s3err.ConditionalRequestConflict)
}

// serveReducedDelete is a DeleteObject reduced to If-Match (RuleIfMatch):
// the client's request with its conditions replaced by If-Match: <the ETag
// read>.
func (p *Proxy) serveReducedDelete(c *call, conds precondition.Conditions) {
	resp, err := reduceToIfMatch(c.r.Context(), c.backend, c.target, conds, func(etag string) (*http.Response, error) {
		req, _, err := p.outboundRequest(c, forwardSpec{guard: leasedwrite.Guard{
			Enforced: true, StoreCondition: http.Header{precondition.HeaderIfMatch: {etag}},
		}})
		if err != nil {
			return nil, err
		}
		return c.backend.send(req)
	})
	switch {
	case err != nil:
		p.fail(c, err)
	case resp == nil:
		c.w.WriteHeader(http.StatusNoContent)
	default:
		defer resp.Body.Close()
		p.relayAnswer(c, resp, nil)
	}
}
