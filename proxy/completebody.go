package proxy

import (
	"bytes"
	"io"
	"net/http"

	"github.com/s3cond/s3cond/internal/s3xml"
)

// maxCompleteBody bounds a CompleteMultipartUpload body: 10 000 parts with
// every checksum S3 knows fit within it.
const maxCompleteBody = s3xml.DefaultCompleteRequestLimit

// checkCompleteBody reads a verified CompleteMultipartUpload body (bounded)
// and checks its part list as S3 does (internal/s3xml). The store is sent
// the document s3cond writes from the checked parts (clientBody), never the
// client's bytes: a part list with a hostile ETag, a duplicated or
// reordered part, or an element a store would read another way never
// reaches it, and the upload stays as it was.
func (c *call) checkCompleteBody() error {
	req, err := s3xml.ParseCompleteRequest(io.Reader(c.auth.Body), maxCompleteBody)
	if err != nil {
		return err
	}
	c.completeBody = req.Marshal()
	return nil
}

// completeBodySpec is the spec for sending the rewritten part list: its
// own length and hashes, since the client's describe other bytes.
func completeBodySpec(body []byte) forwardSpec {
	return forwardSpec{
		body: bytes.NewReader(body), length: int64(len(body)), payloadSHA256: sha256Hex(body),
		header: http.Header{"Content-Md5": {contentMD5(body)}},
	}
}
