package proxy

import (
	"net/http"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// enforceReadConditions evaluates a GetObject or HeadObject's If-Match,
// If-None-Match, If-Modified-Since and If-Unmodified-Since against the
// store's answer before any of its body is relayed: many stores ignore
// them (s3rver answers a stale If-Match with 200 and the old body). The
// headers still go to the store, so one that honours them answers 304 or
// 412 itself and this finds nothing to do. It reports whether it answered.
func (p *Proxy) enforceReadConditions(c *call, resp *http.Response) (status int, answered bool) {
	if c.op != operation.GetObject && c.op != operation.HeadObject {
		return 0, false
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		return 0, false
	}
	outcome := precondition.EvaluateRead(c.r.Header, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"))
	switch outcome.Status {
	case http.StatusPreconditionFailed:
		p.fail(c, s3err.Precondition(outcome.Header))
		return http.StatusPreconditionFailed, true
	case http.StatusNotModified:
		// S3's 304 carries the validators and nothing of the object's body.
		h := c.w.Header()
		for _, name := range []string{"ETag", "Last-Modified"} {
			if v := resp.Header.Get(name); v != "" {
				h.Set(name, v)
			}
		}
		h[requestIDHeader] = []string{c.id}
		c.w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, true
	}
	return 0, false
}
