package embedded

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// partCopies gives the store UploadPartCopy, which gofakes3 lacks: it takes
// the request for an UploadPart without a body and answers 411
// MissingContentLength, so `aws s3 cp` between two keys failed for any
// object above the CLI's multipart threshold. The source range is read from
// the store and handed to gofakes3 as the part's body, and the part's ETag
// is answered as S3's CopyPartResult. Like gofakes3's CopyObject, it does not
// evaluate x-amz-copy-source-if-* conditions.
type partCopies struct {
	next    http.Handler
	backend gofakes3.Backend
}

var _ http.Handler = (*partCopies)(nil)

// copyPartResult is S3's answer to UploadPartCopy.
type copyPartResult struct {
	XMLName      xml.Name `xml:"CopyPartResult"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
}

func (p *partCopies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	source := r.Header.Get("X-Amz-Copy-Source")
	if r.Method != http.MethodPut || source == "" || !query.Has("uploadId") || !query.Has("partNumber") {
		p.next.ServeHTTP(w, r)
		return
	}
	part, err := p.readSource(source, r.Header.Get("X-Amz-Copy-Source-Range"))
	if err != nil {
		writeError(w, r, err)
		return
	}

	upload := r.Clone(r.Context())
	for name := range upload.Header {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-copy-source") {
			upload.Header.Del(name)
		}
	}
	upload.Header.Del("Content-MD5")
	upload.Body = io.NopCloser(bytes.NewReader(part))
	upload.ContentLength = int64(len(part))
	upload.Header.Set("Content-Length", strconv.Itoa(len(part)))

	answer := &bufferedAnswer{header: w.Header()}
	p.next.ServeHTTP(answer, upload)
	if answer.status != 0 && answer.status != http.StatusOK {
		w.WriteHeader(answer.status)
		_, _ = w.Write(answer.body.Bytes())
		return
	}
	result, err := xml.Marshal(copyPartResult{
		LastModified: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		ETag:         w.Header().Get("ETag"),
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Del("ETag") // S3 gives it in the body only
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(append([]byte(xml.Header), result...))
}

// readSource returns the bytes x-amz-copy-source (and its range, if any)
// name.
func (p *partCopies) readSource(source, byteRange string) ([]byte, error) {
	bucket, key, err := parseCopySource(source)
	if err != nil {
		return nil, err
	}
	var rangeRequest *gofakes3.ObjectRangeRequest
	if byteRange != "" {
		first, last, ok := parseCopySourceRange(byteRange)
		if !ok {
			return nil, gofakes3.ErrorMessage(gofakes3.ErrInvalidArgument, "x-amz-copy-source-range must be bytes=first-last")
		}
		rangeRequest = &gofakes3.ObjectRangeRequest{Start: first, End: last}
	}
	obj, err := p.backend.GetObject(bucket, key, rangeRequest)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	if rangeRequest != nil && (obj.Range == nil || obj.Range.Start+obj.Range.Length != rangeRequest.End+1) {
		return nil, gofakes3.ErrInvalidRange // the range ends past the object
	}
	return io.ReadAll(obj.Contents)
}

// parseCopySource splits "bucket/key" (with or without a leading slash,
// the key URL-encoded) as S3 accepts it. A version id is not supported.
func parseCopySource(source string) (bucket, key string, err error) {
	path, version, _ := strings.Cut(source, "?")
	if version != "" && version != "versionId=null" {
		return "", "", gofakes3.ErrorMessage(gofakes3.ErrNotImplemented, "the development store keeps no versions")
	}
	decoded, err := url.PathUnescape(strings.TrimPrefix(path, "/"))
	if err != nil {
		return "", "", gofakes3.ErrorMessage(gofakes3.ErrInvalidArgument, "x-amz-copy-source is not URL-encoded correctly")
	}
	bucket, key, found := strings.Cut(decoded, "/")
	if !found || bucket == "" || key == "" {
		return "", "", gofakes3.ErrorMessage(gofakes3.ErrInvalidArgument, "x-amz-copy-source must name a bucket and a key")
	}
	return bucket, key, nil
}

// parseCopySourceRange parses "bytes=first-last", the only form S3 takes.
func parseCopySourceRange(s string) (first, last int64, ok bool) {
	spec, found := strings.CutPrefix(s, "bytes=")
	if !found {
		return 0, 0, false
	}
	from, to, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(from, 10, 64)
	last, err2 := strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return 0, 0, false
	}
	return first, last, true
}
