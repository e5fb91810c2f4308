package postform

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// wireCounter stands for the client's connection: it counts the bytes
// the server took from it.
type wireCounter struct {
	r     io.Reader
	taken int64
}

func (c *wireCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.taken += int64(n)
	return n, err
}

// The fields before the file are bounded by the bytes read from the wire,
// part headers included: mime/multipart alone would take a part header of
// up to 10 MiB into memory before s3cond saw the part (issue 23, item 2).
func TestPostFormPartHeaderIsBoundedOnTheWire(t *testing.T) {
	header := "--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\nX-Filler: " + strings.Repeat("a", 9<<20+512<<10)
	wire := &wireCounter{r: strings.NewReader(header + "\r\n\r\nk\r\n--XyZ--\r\n")}
	r, _ := http.NewRequest(http.MethodPost, "http://s3cond/bucket", wire)
	r.Header.Set("Content-Type", "multipart/form-data; boundary=XyZ")
	r.ContentLength = int64(len(header)) + 64

	_, err := Read(r)
	if !s3err.Is(err, s3err.MaxPostPreDataLengthExceeded) {
		t.Fatalf("a 9.5 MiB part header: err = %v, want MaxPostPreDataLengthExceeded", err)
	}
	if wire.taken > maxPostPreambleBytes+1 {
		t.Fatalf("read %d bytes of the header from the wire, bound is %d", wire.taken, maxPostPreambleBytes)
	}
}
