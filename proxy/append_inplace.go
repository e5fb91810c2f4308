package proxy

import (
	"io"
	"net/http"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// rewriteByUpload appends to an object larger than appendBufferedLimit
// where UploadPartCopy is not used (at most appendSinglePutLimit, or a
// store without it): its bytes, streamed from its GET, and the client's go
// into the one part of a multipart upload, invisible until its completion.
// Not a PutObject: a store that writes in place (s3rver) truncates the
// object as a PutObject begins, which cut the GET feeding it short, and
// keeps a body that failed verification midway. The result has a
// multipart ETag.
func (s *appendSender) rewriteByUpload(g leasedwrite.Guard, pinned precondition.ObjectState) bool {
	c := s.c
	if s.offset+s.length > maxSinglePut {
		s.Fail(s3err.Newf(s3err.NotImplemented, "An append that makes an object larger than 5 GiB needs UploadPartCopy, which this store does not implement."))
		return false
	}
	get, uploadID, ok := s.beginAppendUpload(g, http.MethodGet, pinned)
	if !ok {
		return false
	}
	defer get.Body.Close()
	etag, err := s.uploadAppendedPart(g, uploadID, 1, io.MultiReader(get.Body, s.body), s.offset+s.length)
	if err == nil {
		err = g.BeforeFinalByte()
	}
	if err != nil {
		s.p.abortCopyUpload(c, uploadID)
		s.Fail(err)
		return false
	}
	return s.completeAppend(g, uploadID, []s3xml.CompletePart{{PartNumber: 1, ETag: etag}}, pinned)
}
