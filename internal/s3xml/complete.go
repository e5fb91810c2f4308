package s3xml

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/s3cond/s3cond/internal/s3err"
)

// CompleteRequest is the body of CompleteMultipartUpload.
type CompleteRequest struct {
	Parts []CompletedPart
}

// CompletedPart is one <Part>: its number, the ETag UploadPart returned and
// any checksum the client asks S3 to verify.
type CompletedPart struct {
	PartNumber        int    `xml:"PartNumber"`
	ETag              string `xml:"ETag"`
	ChecksumCRC32     string `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	ChecksumCRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumSHA1      string `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string `xml:"ChecksumSHA256,omitempty"`
}

type completeWire struct {
	XMLName xml.Name        `xml:"CompleteMultipartUpload"`
	Xmlns   string          `xml:"xmlns,attr,omitempty"`
	Parts   []CompletedPart `xml:"Part"`
}

// ParseCompleteRequest reads a CompleteMultipartUpload body of at most limit
// bytes (DefaultCompleteRequestLimit if limit <= 0). A body that is not
// well-formed, lists no part or more than 10000, or has a part without an
// ETag or with a non-numeric PartNumber is MalformedXML; a missing part number
// or one outside 1..10000 is InvalidArgument, as S3 answers. Part order and duplicates are left to the
// backend, which knows the parts.
func ParseCompleteRequest(r io.Reader, limit int64) (*CompleteRequest, error) {
	var wire completeWire
	s := shape{roots: []string{"CompleteMultipartUpload"}, child: "Part", maxChildren: MaxParts}
	if err := parseRequest(r, limit, DefaultCompleteRequestLimit, s, &wire); err != nil {
		return nil, err
	}
	if len(wire.Parts) == 0 {
		return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("complete request lists no parts"))
	}
	for i, p := range wire.Parts {
		if p.ETag == "" {
			return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("part %d has no ETag", i+1))
		}
		if p.PartNumber < 1 || p.PartNumber > MaxParts {
			return nil, s3err.Newf(s3err.InvalidArgument, "Part number must be an integer between 1 and %d, inclusive", MaxParts).
				With("ArgumentName", "PartNumber").With("ArgumentValue", fmt.Sprint(p.PartNumber))
		}
	}
	return &CompleteRequest{Parts: wire.Parts}, nil
}

// Marshal renders the request for the backend, in the S3 namespace.
func (c *CompleteRequest) Marshal() []byte {
	return marshal(completeWire{Xmlns: Namespace, Parts: c.Parts})
}

// CompleteResult is what a successful CompleteMultipartUpload returns.
type CompleteResult struct {
	Bucket   string `xml:"Bucket"`
	Key      string `xml:"Key"`
	ETag     string `xml:"ETag"`
	Location string `xml:"Location"`
}

// ParseCompleteResult reads a backend's CompleteMultipartUpload response of
// at most limit bytes (DefaultSmallResultLimit if limit <= 0). S3 answers
// 200 and reports a late failure as an <Error> document; that comes back as
// the *s3err.Error it names. A result without an ETag is BadGateway, since
// s3cond cannot tell which version it wrote.
func ParseCompleteResult(r io.Reader, limit int64) (*CompleteResult, error) {
	var wire struct {
		XMLName xml.Name `xml:"CompleteMultipartUploadResult"`
		CompleteResult
	}
	s := shape{roots: []string{"CompleteMultipartUploadResult"}}
	if err := parseResult(r, limit, DefaultSmallResultLimit, s, &wire); err != nil {
		return nil, err
	}
	if wire.ETag == "" {
		return nil, s3err.Wrap(s3err.BadGateway, fmt.Errorf("backend CompleteMultipartUpload result has no ETag"))
	}
	res := wire.CompleteResult
	return &res, nil
}
