package embedded

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/s3err"
)

// multipartETags keeps a multipart object's ETag the same in every answer.
//
// Why: gofakes3 answers CompleteMultipartUpload with S3's multipart ETag
// ("<MD5 of the parts' MD5s>-N") but stores the MD5 of the whole object, and
// reports that in HEAD, GET and LIST. A client that keeps the completion's
// ETag for a later If-Match would always get 412 PreconditionFailed, and
// s3cond's own precondition checks HEAD the store. This handler answers the
// completion with the stored ETag instead. Real S3 reports "-N" everywhere;
// clients treat ETags as opaque, so what matters is that all answers agree.
//
// Object writes to one key are stored one at a time, so that no other write
// lands between a completion and the read of the ETag it stored. Only the
// store is serialised, not the upload: a write takes the key's lock when its
// body has fully arrived (see lockAtEOF).
type multipartETags struct {
	next    http.Handler
	backend gofakes3.Backend
	writes  *keyLocks
	log     zerolog.Logger
}

var _ http.Handler = (*multipartETags)(nil)

func newMultipartETags(next http.Handler, backend gofakes3.Backend, log zerolog.Logger) *multipartETags {
	return &multipartETags{next: next, backend: backend, writes: newKeyLocks(), log: log}
}

func (m *multipartETags) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, isObject := objectOf(r)
	completes := isObject && r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
	// PUT without uploadId writes or copies the object; with it, a part.
	writes := isObject && r.Method == http.MethodPut && !r.URL.Query().Has("uploadId")
	if !completes && !writes {
		m.next.ServeHTTP(w, r)
		return
	}
	gate := &keyWriteGate{ctx: r.Context(), locks: m.writes, key: bucket + "/" + key}
	defer gate.release()
	if r.ContentLength == 0 {
		// No body to wait for (a copy): lock now. It fails only when the
		// client went away while another write of the key ran.
		if err := gate.acquire(); err != nil {
			writeError(w, r, s3err.Wrap(s3err.ServiceUnavailable, err))
			return
		}
	} else {
		r = r.WithContext(r.Context()) // a copy: the inbound request stays as it was
		r.Body = &lockAtEOF{ReadCloser: r.Body, gate: gate}
	}
	if !completes {
		m.next.ServeHTTP(w, r)
		return
	}
	answer := &bufferedAnswer{header: w.Header()}
	m.next.ServeHTTP(answer, r)
	body := answer.body.Bytes()
	if (answer.status == 0 || answer.status == http.StatusOK) && gate.acquire() == nil {
		body = m.withStoredETag(bucket, key, body)
	}
	w.Header().Del("Content-Length") // the rewritten body may be longer
	if answer.status != 0 {
		w.WriteHeader(answer.status)
	}
	_, _ = w.Write(body)
}

// withStoredETag returns the completion answer with the ETag the store now
// reports for the object, or the answer unchanged if either cannot be read.
func (m *multipartETags) withStoredETag(bucket, key string, answer []byte) []byte {
	var result gofakes3.CompleteMultipartUploadResult
	if err := xml.Unmarshal(answer, &result); err != nil || result.ETag == "" {
		return answer // an error in a 200, or not a completion result
	}
	stored, err := m.backend.HeadObject(bucket, key)
	if err != nil {
		m.log.Warn().Err(err).Str("bucket", bucket).Str("key", key).
			Msg("cannot read the ETag of a completed multipart upload; answering with gofakes3's")
		return answer
	}
	if stored.Contents != nil {
		_ = stored.Contents.Close()
	}
	result.ETag = gofakes3.FormatETag(stored.Hash)
	rewritten, err := xml.MarshalIndent(result, "", "  ")
	if err != nil {
		return answer
	}
	return append([]byte(xml.Header), rewritten...)
}

// objectOf splits a path-style request path into bucket and key; isObject
// is false when the path names no object.
func objectOf(r *http.Request) (bucket, key string, isObject bool) {
	bucket, key, _ = strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return bucket, key, bucket != "" && key != ""
}

// bufferedAnswer holds a small answer (a completion result) so that it can
// be rewritten before it is sent. Headers go straight to the real writer's.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) { return b.body.Write(p) }
