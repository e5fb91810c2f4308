package proxy

import (
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/s3err"
)

// s3MaxHeaderSection is the largest request header section S3 accepts
// (8 KiB); a larger one is 400 RequestHeaderSectionTooLarge, answered
// before anything else is looked at.
const s3MaxHeaderSection = 8 << 10

// MaxHeaderBytes is the http.Server bound on a request's header block
// (request line included) s3cond is served with: above S3's limit, so that
// every section S3 would refuse still reaches checkHeaderSection and gets
// S3's XML answer, yet small enough to bound the memory a connection can
// make the server hold. A block beyond it gets net/http's own 431.
const MaxHeaderBytes = 16 << 10

// headerSectionSize is the size of r's header field lines as they came on
// the wire ("Name: value\r\n" each, Host included; net/http moves Host out
// of r.Header), without the request line.
func headerSectionSize(r *http.Request) int {
	const lineFraming = len(": ") + len("\r\n")
	size := 0
	if r.Host != "" {
		size += len("Host") + lineFraming + len(r.Host)
	}
	for name, values := range r.Header {
		for _, v := range values {
			size += len(name) + lineFraming + len(v)
		}
	}
	return size
}

// checkHeaderSection refuses a request whose header section is over S3's
// limit, as S3 does, naming the limit (MaxSizeAllowed).
func checkHeaderSection(r *http.Request) error {
	if headerSectionSize(r) <= s3MaxHeaderSection {
		return nil
	}
	return s3err.New(s3err.RequestHeaderSectionTooLarge).
		With("MaxSizeAllowed", strconv.Itoa(s3MaxHeaderSection))
}
