package proxy

import (
	"net/http"

	"github.com/s3cond/s3cond/sigv4"
)

// send sends req to the backend and returns its answer as it is: s3cond
// passes redirects back to its client rather than following them (the
// production client refuses them too, with CheckRedirect).
//
// Why not Client.Do: for every request it clones the header map for the
// redirects it might follow and wraps the request in redirect bookkeeping,
// five allocations of a forwarded GET's ninety; a client with a Timeout or a
// cookie Jar still goes through Do, which implements them.
//
// req is given away: every caller builds it for this one call, so the
// re-signer may sign it in place (sigv4.OwnedRoundTripper).
func (b *Backend) send(req *http.Request) (*http.Response, error) {
	c := b.Client
	if c.Timeout != 0 || c.Jar != nil {
		return c.Do(req)
	}
	transport := c.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	if owned, ok := transport.(sigv4.OwnedRoundTripper); ok {
		return owned.RoundTripOwned(req)
	}
	return transport.RoundTrip(req)
}
