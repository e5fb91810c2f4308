package proxy

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
)

// postAnswer stands between the PutObject that stores a POST's file and
// the client. A failure (an S3 error document from s3cond or the store)
// reaches the client as it is; a success is held back, because POST Object
// answers differently from PutObject (answerPost).
type postAnswer struct {
	w           http.ResponseWriter
	succeeded   bool
	passthrough bool
}

func (a *postAnswer) Header() http.Header { return a.w.Header() }

func (a *postAnswer) WriteHeader(code int) {
	if a.succeeded || a.passthrough {
		return
	}
	if code >= 200 && code < 300 {
		a.succeeded = true
		return
	}
	a.passthrough = true
	a.w.WriteHeader(code)
}

func (a *postAnswer) Write(b []byte) (int, error) {
	if !a.succeeded && !a.passthrough {
		a.WriteHeader(http.StatusOK)
	}
	if a.succeeded {
		return len(b), nil // PutObject's empty success body
	}
	return a.w.Write(b)
}

// FlushError flushes a failure on to the client; a held success is not
// sent (a flush would commit the real writer to PutObject's 200).
func (a *postAnswer) FlushError() error {
	if a.passthrough {
		return http.NewResponseController(a.w).Flush()
	}
	return nil
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (a *postAnswer) Unwrap() http.ResponseWriter { return a.w }

// header is the backend's PutObject answer, as copied for the client.
func (a *postAnswer) header() http.Header { return a.w.Header() }

// postResponse is the document of success_action_status 201.
type postResponse struct {
	XMLName  xml.Name `xml:"PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// answerPost answers a stored POST Object as S3 does: a 303 to
// success_action_redirect (or the older redirect) with bucket, key and etag
// added to its query; otherwise success_action_status 200 (empty), 201 (a
// PostResponse document) or, for anything else, 204.
func (p *Proxy) answerPost(c *call, t operation.Target, fields map[string]string, h http.Header) {
	etag := firstValue(h, s3ResponseName("Etag"))
	location := p.objectLocation(c, t)
	h.Del("Content-Type")
	h.Set("Content-Length", "0")
	redirect, ok := fields["success_action_redirect"]
	if !ok {
		redirect = fields["redirect"]
	}
	if u, err := url.Parse(redirect); redirect != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		q := u.Query()
		q.Set("bucket", t.Bucket)
		q.Set("key", t.Key)
		q.Set("etag", etag)
		u.RawQuery = q.Encode()
		h.Set("Location", u.String())
		c.w.WriteHeader(http.StatusSeeOther)
		return
	}
	h.Set("Location", location)
	switch fields["success_action_status"] {
	case "200":
		c.w.WriteHeader(http.StatusOK)
	case "201":
		doc, err := xml.Marshal(postResponse{Location: location, Bucket: t.Bucket, Key: t.Key, ETag: etag})
		if err != nil {
			c.w.WriteHeader(http.StatusNoContent)
			return
		}
		body := append([]byte(xml.Header), doc...)
		h.Set("Content-Type", "application/xml")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		c.w.WriteHeader(http.StatusCreated)
		_, _ = c.w.Write(body)
	default:
		h.Del("Content-Length")
		c.w.WriteHeader(http.StatusNoContent)
	}
}

// firstValue reads a header stored under a name that is not canonical
// (copyResponseHeader writes S3's spellings).
func firstValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return h.Get(name)
}

// objectLocation is the URL of the stored object as the client addressed
// s3cond: virtual-hosted when the form was posted to <bucket>.<domain>.
// The key is escaped as one path segment, its "/" as %2F, as S3 writes it
// in a POST's Location (".../uploads%2Fphoto.jpg").
func (p *Proxy) objectLocation(c *call, t operation.Target) string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	path := "/" + url.PathEscape(t.Bucket) + "/" + url.PathEscape(t.Key)
	if operation.VirtualHostBucket(c.r.Host, p.domain) != "" {
		path = "/" + url.PathEscape(t.Key)
	}
	return scheme + "://" + c.r.Host + path
}
