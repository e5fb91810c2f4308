package probe

import (
	"fmt"
	"io"
	"net/http"
)

// The store under probe is not trusted to answer sanely: it may stream an
// endless body or header block, and the SDK reads error bodies whole into
// memory. Every answer the probe reads passes through these bounds, so a
// hostile store costs at most maxAnswerBytes per request in flight. S3's
// answers to what the probe sends (an Error document, a CopyObjectResult, a
// CompleteMultipartUploadResult, a one-entry DeleteResult) are under 2 KiB.
const (
	maxAnswerBytes       = 64 << 10
	maxAnswerHeaderBytes = 64 << 10
)

// errAnswerTooLarge is the cause when a store's answer exceeds maxAnswerBytes.
var errAnswerTooLarge = fmt.Errorf("the store's answer exceeds %d bytes", maxAnswerBytes)

// boundedClient is c with every answer's headers and body capped.
func boundedClient(c *http.Client) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if t, ok := next.(*http.Transport); ok {
		// A clone: the caller's transport may serve others with other limits.
		t = t.Clone()
		t.MaxResponseHeaderBytes = maxAnswerHeaderBytes
		next = t
	}
	return &http.Client{Transport: &boundedTransport{next: next}, CheckRedirect: c.CheckRedirect, Timeout: c.Timeout}
}

// boundedTransport caps every response body at maxAnswerBytes.
type boundedTransport struct{ next http.RoundTripper }

func (b *boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{body: resp.Body, left: maxAnswerBytes}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (b *boundedTransport) CloseIdleConnections() {
	if c, ok := b.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// cappedBody reads at most left bytes; one byte more is errAnswerTooLarge,
// so a cut-off answer is never taken for a complete one.
type cappedBody struct {
	body io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.body.Read(one[:])
		if n > 0 {
			return 0, errAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.body.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedBody) Close() error { return c.body.Close() }
