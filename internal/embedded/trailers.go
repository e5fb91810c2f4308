package embedded

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/sigv4"
)

// decodedTrailers turns the aws-chunked uploads with a trailing checksum
// that s3cond forwards (STREAMING-UNSIGNED-PAYLOAD-TRAILER, when a client
// such as the Node SDK sends its checksum as a trailer) into plain uploads
// with the checksum as a header.
//
// Why: gofakes3 decodes only the signed aws-chunked framing; it stored these
// bodies framing and all, so a 64 KiB object from the Node SDK came back as
// 65 581 bytes. The checksum is known only at the end of the body and
// gofakes3 takes metadata from the headers, so the body is read whole first
// (the store holds each object in memory anyway). A body that ends early,
// as when s3cond withholds the end of an upload it did not verify, is
// refused, and nothing is stored.
type decodedTrailers struct {
	next http.Handler
}

var _ http.Handler = (*decodedTrailers)(nil)

const unsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"

func (d *decodedTrailers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || r.Header.Get("X-Amz-Content-Sha256") != unsignedTrailer {
		d.next.ServeHTTP(w, r)
		return
	}
	body, err := sigv4.NewBody(r.Body, sigv4.BodySpec{
		Mode: sigv4.PayloadStreamingUnsignedTrailer, ContentLength: r.ContentLength, Header: r.Header})
	if err != nil {
		writeError(w, r, err)
		return
	}
	payload, err := io.ReadAll(body)
	if err != nil {
		writeError(w, r, err)
		return
	}

	plain := r.Clone(r.Context())
	plain.Body = io.NopCloser(bytes.NewReader(payload))
	plain.ContentLength = int64(len(payload))
	plain.Header.Set("Content-Length", strconv.Itoa(len(payload)))
	plain.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	for _, name := range []string{"X-Amz-Trailer", "X-Amz-Decoded-Content-Length"} {
		plain.Header.Del(name)
	}
	if encoding := sigv4.StripAWSChunked(r.Header.Get("Content-Encoding")); encoding != "" {
		plain.Header.Set("Content-Encoding", encoding)
	} else {
		plain.Header.Del("Content-Encoding")
	}
	if name, value, ok := body.Checksum(); ok {
		plain.Header.Set(name, value)
	}
	d.next.ServeHTTP(w, plain)
}
