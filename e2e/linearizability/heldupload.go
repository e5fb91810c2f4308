package linearizability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// HeldUpload is a PutObject sent by hand whose body the test releases in
// two parts, so it can act between "s3cond has the whole body" and "the
// backend has it".
type HeldUpload struct {
	body  []byte
	split int
	pipe  *io.PipeWriter
	done  chan struct{} // closed once resp and err are set
	resp  *e2e.RawResponse
	err   error
	// connsAtStart is what each backend connection had carried before the
	// upload began (nil without a delay proxy).
	connsAtStart map[*testservers.ProxyConn]int64
}

// StartHeldUpload starts a PUT of body to /bucket/key with header (for
// If-Match / If-None-Match), signed UNSIGNED-PAYLOAD, and sends the first
// split bytes of the body. delay (may be nil) is the proxy in front of the
// backend, for HoldAtBackend.
func StartHeldUpload(ctx context.Context, endpoint string, cred e2e.Credentials, bucket, key string, header http.Header, body []byte, split int, delay *testservers.DelayProxy) *HeldUpload {
	pr, pw := io.Pipe()
	u := &HeldUpload{body: body, split: split, pipe: pw, done: make(chan struct{})}
	if delay != nil {
		u.connsAtStart = map[*testservers.ProxyConn]int64{}
		for _, c := range delay.Conns() {
			u.connsAtStart[c] = c.BytesUp()
		}
	}
	go func() {
		resp, err := e2e.DoContext(ctx, endpoint, cred, e2e.RawRequest{Method: http.MethodPut, Path: "/" + bucket + "/" + key,
			Header: header, BodyFrom: pr, ContentLength: int64(len(body)), PayloadHash: e2e.UnsignedPayload})
		_ = pr.CloseWithError(io.ErrClosedPipe) // unblock a writer if the request ended early
		u.resp, u.err = resp, err
		close(u.done)
	}()
	go func() { _, _ = pw.Write(body[:split]) }()
	return u
}

// SendRest sends the rest of the body.
func (u *HeldUpload) SendRest() {
	go func() {
		_, _ = u.pipe.Write(u.body[u.split:])
		_ = u.pipe.Close()
	}()
}

// Abandon breaks the body off: the HTTP client gives up the request as a
// client that disconnects mid-upload would.
func (u *HeldUpload) Abandon() { _ = u.pipe.CloseWithError(fmt.Errorf("client gave up the upload")) }

// Done is closed once the upload has its response (or transport error).
func (u *HeldUpload) Done() <-chan struct{} { return u.done }

// Wait returns the response (or transport error).
func (u *HeldUpload) Wait(timeout time.Duration) (*e2e.RawResponse, error) {
	select {
	case <-u.done:
		return u.resp, u.err
	case <-time.After(timeout):
		return nil, fmt.Errorf("no response within %s", timeout)
	}
}

// backendConnCarrying waits until one connection through the delay proxy has
// carried at least min more bytes up than it had in before, and then stays
// still for a moment: the connection of the held upload, with s3cond
// waiting for more body.
func backendConnCarrying(delay *testservers.DelayProxy, before map[*testservers.ProxyConn]int64, min int64, within time.Duration) (*testservers.ProxyConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var carrying *testservers.ProxyConn
	err := testkit.Poll(ctx, func(context.Context) error {
		for _, c := range delay.Conns() {
			if n := c.BytesUp(); n-before[c] >= min {
				// s3cond reports nothing: a connection that stays
				// still is one where it waits for more body.
				time.Sleep(200 * time.Millisecond)
				if c.BytesUp() == n {
					carrying = c
					return nil
				}
			}
		}
		return fmt.Errorf("no backend connection carried %d bytes", min)
	})
	return carrying, err
}

// HoldAtBackend sends the rest of u's body and keeps its final bytes in
// the delay proxy: it returns once s3cond has sent the whole body, which
// for a conditional write means it holds the lease and re-checked the
// precondition. The caller must Resume (deliver) or Reset (drop) the
// returned connection.
func (u *HeldUpload) HoldAtBackend(delay *testservers.DelayProxy, within time.Duration) (*testservers.ProxyConn, error) {
	conn, err := backendConnCarrying(delay, u.connsAtStart, int64(u.split)-1, within)
	if err != nil {
		return nil, err
	}
	conn.Pause()
	// Count from where the request's head ends, not from the bytes seen
	// so far: on a loaded machine s3cond may still be forwarding the first
	// part, and a count relative to that would be reached before s3cond
	// sent the last bytes it holds back until it has the lease.
	bodyStart, ok := conn.HeadEndAfter(u.connsAtStart[conn])
	if !ok {
		conn.Resume()
		return nil, fmt.Errorf("the backend connection carries no request head")
	}
	u.SendRest()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := testkit.Poll(ctx, func(context.Context) error {
		if sent := conn.BytesUp() - bodyStart; sent < int64(len(u.body)) {
			return fmt.Errorf("s3cond sent %d of the %d body bytes to the backend", sent, len(u.body))
		}
		return nil
	}); err != nil {
		conn.Resume()
		return nil, err
	}
	return conn, nil
}
