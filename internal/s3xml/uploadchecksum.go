package s3xml

import (
	"fmt"
	"io"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// UploadChecksum is what a backend's ListParts answer says of a multipart
// upload's checksum: its algorithm, or, for an <Error>, the store's code.
type UploadChecksum struct {
	Algorithm string
	Code      string
}

// ReadUploadChecksum reads a ListParts answer (or the store's error) of at
// most MaxBackendDocument bytes for the upload's ChecksumAlgorithm. The
// error document is not turned into an error: the caller asks only to
// choose which error a failed part gets.
func ReadUploadChecksum(r io.Reader) (UploadChecksum, error) {
	data, err := readBounded(r, MaxBackendDocument, s3err.BadGateway, s3err.BadGateway)
	if err != nil {
		return UploadChecksum{}, err
	}
	if _, err := scan(data, shape{roots: []string{"ListPartsResult", "Error"}}); err != nil {
		return UploadChecksum{}, fmt.Errorf("backend ListParts answer: %w", err)
	}
	var doc struct {
		ChecksumAlgorithm string
		Code              string
	}
	if err := decodeInto(data, &doc); err != nil {
		return UploadChecksum{}, fmt.Errorf("backend ListParts answer: %w", err)
	}
	return UploadChecksum{Algorithm: strings.TrimSpace(doc.ChecksumAlgorithm), Code: doc.Code}, nil
}
