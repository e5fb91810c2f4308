package s3xml

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/s3cond/s3cond/internal/s3err"
)

// CopyObjectResult is what a successful CopyObject returns.
type CopyObjectResult struct {
	ETag         string `xml:"ETag"`
	LastModified string `xml:"LastModified"`
}

// ParseCopyResult reads a backend's CopyObject response of at most limit
// bytes (DefaultSmallResultLimit if limit <= 0). As with
// CompleteMultipartUpload, S3 may answer 200 with an <Error> document, which
// comes back as the *s3err.Error it names; a result without an ETag is
// BadGateway.
func ParseCopyResult(r io.Reader, limit int64) (*CopyObjectResult, error) {
	var wire struct {
		XMLName xml.Name `xml:"CopyObjectResult"`
		CopyObjectResult
	}
	s := shape{roots: []string{"CopyObjectResult"}}
	if err := parseResult(r, limit, DefaultSmallResultLimit, s, &wire); err != nil {
		return nil, err
	}
	if wire.ETag == "" {
		return nil, s3err.Wrap(s3err.BadGateway, fmt.Errorf("backend CopyObject result has no ETag"))
	}
	res := wire.CopyObjectResult
	return &res, nil
}
