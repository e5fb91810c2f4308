package proxy

import (
	"io"
	"net/http"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// appendTags are the tags of the object appended to, in x-amz-tagging's
// form, for the write that replaces it ("" for none). A GET that says the
// object has none (x-amz-tagging-count: 0, or absent where the store
// counts them) saves the read; a store that does not report the count
// (s3rver) or a HEAD (which never does) is asked. A store without tagging
// (501, 405) keeps none.
func (s *appendSender) appendTags(g leasedwrite.Guard, existing http.Header) (string, error) {
	if count := existing.Get("X-Amz-Tagging-Count"); count == "0" {
		return "", nil
	}
	c := s.c
	h := http.Header{}
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Request-Payer"} {
		if v, ok := c.r.Header[name]; ok {
			h[name] = v
		}
	}
	resp, err := c.backend.send(c.backend.newRequest(g.Ctx, http.MethodGet, c.target.Bucket, c.target.RawKey, "tagging", h))
	if err != nil {
		return "", backendError(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotImplemented, http.StatusMethodNotAllowed:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s3xml.MaxBackendDocument))
		return "", nil
	default:
		return "", s3err.Newf(s3err.BadGateway, "The backend answered GetObjectTagging of the object appended to with status %d.", resp.StatusCode)
	}
	tags, err := s3xml.ParseTagging(resp.Body, s3xml.DefaultTaggingLimit)
	if err != nil {
		return "", s3err.Wrap(s3err.BadGateway, err)
	}
	return tags, nil
}
