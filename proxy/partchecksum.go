package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// orChecksumTypeMismatch keeps S3's order for an UploadPart whose checksum
// did not verify: S3 first compares the part's checksum algorithm with the
// one its upload was created with (CreateMultipartUpload's
// x-amz-checksum-algorithm) and answers a different one with 400
// InvalidRequest, before it reads the body. s3cond verifies the value as
// the body streams, without knowing the upload's algorithm; so on this
// error path only it asks the store (ListParts, one part at most) and
// answers as S3 would. Every byte is still verified: this only chooses
// which error a failed part gets.
func (p *Proxy) orChecksumTypeMismatch(c *call, e *s3err.Error) *s3err.Error {
	if e.Code != s3err.BadDigest || c.op != operation.UploadPart || c.auth == nil {
		return e
	}
	partAlgorithm := checksumAlgorithmOf(c.auth.Body)
	if partAlgorithm == "" {
		return e
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), bucketCheckTimeout)
	defer cancel()
	upload, err := c.backend.uploadChecksum(ctx, c.target, c.query.Get("uploadId"))
	switch {
	case err != nil:
		return e
	case upload.code == string(s3err.NoSuchUpload):
		return s3err.New(s3err.NoSuchUpload)
	case upload.algorithm == "", strings.EqualFold(upload.algorithm, "null"), strings.EqualFold(upload.algorithm, partAlgorithm):
		return e
	}
	return s3err.Newf(s3err.InvalidRequest, "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s",
		strings.ToUpper(upload.algorithm), partAlgorithm)
}

// checksumAlgorithmOf names the request's x-amz-checksum-* algorithm as S3
// does ("SHA256"), header or trailer, or "" when it has none.
func checksumAlgorithmOf(body *sigv4.Body) string {
	name, _, ok := body.Checksum()
	if !ok {
		name = body.TrailerChecksumName()
	}
	return strings.ToUpper(strings.TrimPrefix(strings.ToLower(name), "x-amz-checksum-"))
}

// uploadChecksumAnswer is what ListParts said about an upload: its checksum
// algorithm, or the store's error code.
type uploadChecksumAnswer struct {
	algorithm string
	code      string
}

// uploadChecksum asks the store for the checksum algorithm of a multipart
// upload: ListParts with max-parts=1 (0 means the default to some stores),
// signed like every backend request.
func (b *Backend) uploadChecksum(ctx context.Context, t operation.Target, uploadID string) (uploadChecksumAnswer, error) {
	query := "max-parts=1&uploadId=" + url.QueryEscape(uploadID)
	resp, err := b.send(b.newRequest(ctx, http.MethodGet, t.Bucket, t.RawKey, query, nil))
	if err != nil {
		return uploadChecksumAnswer{}, backendError(err)
	}
	defer resp.Body.Close()
	doc, err := s3xml.ReadUploadChecksum(resp.Body)
	if err != nil {
		return uploadChecksumAnswer{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return uploadChecksumAnswer{code: doc.Code}, nil
	}
	return uploadChecksumAnswer{algorithm: doc.Algorithm}, nil
}
