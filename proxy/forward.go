package proxy

import (
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/sigv4"
)

// forwardSpec says what to send to the backend for a call.
type forwardSpec struct {
	// body is the verified client body (nil: none). Its last byte is held
	// back until it has verified and gate allowed it.
	body io.Reader
	// length is the decoded body length, -1 if unknown.
	length int64
	// payloadSHA256 is the body's hex SHA-256 when known up front.
	payloadSHA256 string
	// header, if set, replaces selected outbound headers after filtering.
	header http.Header
	// guard is what the caller asks of the request at its two hooks
	// (before the final byte, before a success is relayed), its context
	// and its condition headers; the zero Guard asks nothing. A leased
	// write sets it (proxy/leasedwrite): forward only calls the hooks.
	guard leasedwrite.Guard
}

// clientBody is the spec for sending the client's own verified body. When
// checksums are forwarded and the client sent one as a trailer, the body is
// re-framed as an unsigned aws-chunked stream with that trailer, so the
// backend can store the checksum: its value is known only at the end.
func (p *Proxy) clientBody(c *call) forwardSpec {
	if c.completeBody != nil {
		return completeBodySpec(c.completeBody)
	}
	if c.configBody != nil {
		return configBodySpec(c.configBody)
	}
	body := c.auth.Body
	spec := forwardSpec{body: body, length: body.Length()}
	if c.backend.ForwardPayloadHash {
		spec.payloadSHA256 = body.PayloadSHA256()
	}
	trailer := body.TrailerChecksumName()
	if !c.backend.ForwardChecksums || trailer == "" || body.Length() < 0 {
		return spec
	}
	encoded, length := sigv4.EncodeUnsignedTrailer(body, trailerChunkSize)
	spec.body, spec.length, spec.payloadSHA256 = encoded, length, streamingUnsignedTrailer
	spec.header = http.Header{
		"Content-Encoding":             {"aws-chunked"},
		"X-Amz-Decoded-Content-Length": {strconv.FormatInt(body.Length(), 10)},
		"X-Amz-Trailer":                {trailer},
	}
	return spec
}

const (
	trailerChunkSize         = 64 << 10
	streamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// forwardResult is what came back.
type forwardResult struct {
	status int
	header http.Header
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// forward sends the call to the backend and streams the answer back. It
// returns the backend's status, or 0 if s3cond answered with its own error.
func (p *Proxy) forward(c *call, spec forwardSpec) forwardResult {
	spec, err := p.withIntegrityHeader(c, spec)
	if err != nil {
		p.fail(c, err)
		return forwardResult{}
	}
	req, hb, err := p.outboundRequest(c, spec)
	if err != nil {
		p.fail(c, err)
		return forwardResult{}
	}
	resp, err := c.backend.send(req)
	if err != nil {
		// A body that failed verification or a gate that refused is the
		// client's answer; only otherwise did the backend fail.
		if hb != nil && hb.Err() != nil {
			p.fail(c, hb.Err())
		} else {
			p.fail(c, backendError(err))
		}
		return forwardResult{}
	}
	defer resp.Body.Close()
	if hb != nil && hb.Err() != nil {
		// The backend answered before the body was complete (it rejected
		// the request early); it cannot have stored our truncated body.
		p.fail(c, hb.Err())
		return forwardResult{}
	}
	if spec.guard.BeforeSuccess != nil && resp.StatusCode < http.StatusMultipleChoices {
		if err := spec.guard.BeforeSuccess(); err != nil {
			p.fail(c, err)
			return forwardResult{}
		}
	}
	if status, answered := p.enforceReadConditions(c, resp); answered {
		if status == http.StatusPreconditionFailed {
			return forwardResult{} // s3cond's own error, as for every p.fail
		}
		return forwardResult{status: status, header: resp.Header}
	}
	if c.copyAnswer != nil && resp.StatusCode == http.StatusOK {
		resp.Body = c.copyAnswer.capture(resp.Body)
	}
	p.relayAnswer(c, resp, hb)
	return forwardResult{status: resp.StatusCode, header: resp.Header}
}

// holdSmallAnswer holds back the client connection's writes when the whole
// answer (head and a body of known length) is small, so that it leaves in
// one write when released; the caller flushes net/http's buffers first.
// Only once the request body is done: until then net/http may write a
// "100 Continue" from the goroutine reading it.
func holdSmallAnswer(c *call, length int64, body *holdbackReader) *frontconn.Conn {
	conn := frontconn.FromContext(c.r.Context())
	if conn == nil || length < 0 || length > frontconn.MaxHeld-4<<10 || (body != nil && !body.Complete()) {
		return nil
	}
	conn.Hold()
	return conn
}

// releaseHeld flushes net/http's buffers into the held bytes and sends them.
func releaseHeld(c *call, conn *frontconn.Conn) {
	_ = http.NewResponseController(c.w).Flush()
	_ = conn.Release()
}

// copyResponseBody streams the backend's body to the client. If it breaks
// off, the client's response is aborted (the connection is cut, as
// net/http's ReverseProxy does): returning normally would end a chunked
// response cleanly, and a listing cut in half would look complete.
func (p *Proxy) copyResponseBody(c *call, body io.Reader) {
	buf := copyBuffers.Get().(*[]byte)
	_, err := io.CopyBuffer(c.w, body, *buf)
	copyBuffers.Put(buf)
	if err == nil {
		return
	}
	if clientGoneDuringCopy(c.r.Context()) {
		c.info.set(func(i *requestInfo) { i.bodyCutByClient = true })
	} else {
		p.log.Warn().Str("request_id", c.id).Str("backend", c.backend.Name).Err(err).
			Msg("response body copy ended early; aborting the client's response")
	}
	panic(http.ErrAbortHandler)
}

// outboundRequest builds the backend request: same method, mapped bucket,
// raw key (which decodes to the checked key), the query rebuilt from the
// checked values (paramquery.go), filtered headers with the checked ones
// rebuilt from their parsed values, the verified
// body behind a hold-back reader. The re-signing transport signs it last.
func (p *Proxy) outboundRequest(c *call, spec forwardSpec) (*http.Request, *holdbackReader, error) {
	ctx := spec.guard.Ctx
	if ctx == nil {
		ctx = c.r.Context()
	}
	u := c.backend.URL(c.target.Bucket, c.target.RawKey, c.query.raw)
	// A literal rather than http.NewRequestWithContext, which would parse a
	// URL only to have it replaced (two allocations per request).
	req := (&http.Request{
		Method: c.r.Method, URL: u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: outboundHeader(c.r.Header, c.backend.ForwardChecksums, spec.guard.Enforced),
	}).WithContext(ctx)
	// The checked headers go on as s3cond parsed them, never as sent (a
	// date S3 would ignore not at all); what s3cond sets itself for a body
	// it wrote or framed (spec.header) comes last.
	for name, values := range c.checkedHeader {
		if spec.guard.Enforced && writeConditionHeaders[name] {
			continue // s3cond enforces them itself
		}
		if len(values) == 0 {
			delete(req.Header, name)
			continue
		}
		req.Header[name] = values
	}
	for name, values := range spec.guard.StoreCondition {
		req.Header[name] = values
	}
	for name, values := range spec.header {
		if values == nil {
			delete(req.Header, name) // nil: the header must not be sent
			continue
		}
		req.Header[name] = values
	}
	req.Header.Del("X-Amz-Copy-Source")
	if c.copySource != nil {
		req.Header.Set("X-Amz-Copy-Source", c.copySource.header(c.backend))
	}

	var hb *holdbackReader
	switch {
	case spec.body == nil || spec.length == 0:
		// Nothing to hold back: verify the (empty) body and pass the gate
		// before anything is sent.
		if spec.body != nil {
			if err := readToEnd(spec.body); err != nil {
				return nil, nil, err
			}
		}
		if gate := spec.guard.BeforeFinalByte; gate != nil {
			if err := gate(); err != nil {
				return nil, nil, err
			}
		}
		req.Body = http.NoBody
		req.ContentLength = 0
		// X-Amz-Content-Sha256 is left to the re-signer, which sets the
		// empty body's hash (and UNSIGNED-PAYLOAD for a body below) in an
		// allocation it makes anyway.
	case framesBody(c, spec, req.Header):
		body := newFramedOutboundBody(spec.body, spec.length, c.info, spec.guard.BeforeFinalByte)
		hb, req.Body = &body.holdbackReader, body
		for name, values := range framedHeader(spec.length) {
			req.Header[name] = values
		}
		req.ContentLength = framedLength(spec.length)
		req.Header.Set("X-Amz-Content-Sha256", streamingUnsignedTrailer)
	default:
		body := newOutboundBody(spec.body, c.info, spec.guard.BeforeFinalByte)
		hb, req.Body = &body.holdbackReader, body
		req.ContentLength = spec.length
		if spec.payloadSHA256 != "" {
			req.Header.Set("X-Amz-Content-Sha256", spec.payloadSHA256)
		}
	}
	return req, hb, nil
}

// readToEnd reads an empty body to its end (or its first byte), so that
// it verifies: io.Copy of an io.LimitReader, without allocating either.
func readToEnd(body io.Reader) error {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	for {
		n, err := body.Read((*buf)[:1])
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case n > 0:
			return nil
		}
	}
}

// outboundBody is a backend request's body: the verified client body,
// counted, behind the hold-back, in one allocation (three before).
type outboundBody struct {
	holdbackReader
	counter countingReader
}

func newOutboundBody(verified io.Reader, info *requestInfo, gate func() error) *outboundBody {
	b := &outboundBody{counter: countingReader{r: verified, info: info}}
	b.src, b.gate = &b.counter, gate
	return b
}

// newFramedOutboundBody is newOutboundBody with the verified body framed
// (framedBody): the gate runs before the final chunk, and the hold-back
// still withholds the stream's last byte until the frame ended cleanly.
func newFramedOutboundBody(verified io.Reader, length int64, info *requestInfo, gate func() error) *outboundBody {
	b := &outboundBody{counter: countingReader{r: verified, info: info}}
	b.src = newFramedBody(&b.counter, length, gate)
	return b
}

// Close does nothing: the client body is net/http's to close.
func (*outboundBody) Close() error { return nil }

// countingReader counts the decoded bytes received, for the access log.
type countingReader struct {
	r    io.Reader
	info *requestInfo
	n    int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil {
		total := c.n
		c.info.set(func(i *requestInfo) { i.bytesIn = total })
	}
	return n, err
}
