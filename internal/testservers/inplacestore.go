package testservers

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
)

// InPlaceStore stands for s3rver 3.7, which writes a PutObject body into
// the object as it arrives: while an upload is received, a HEAD of its key
// answers 200 with the bytes so far, and an upload cut off before its end
// leaves them as the object. Like s3rver it ignores condition headers.
func InPlaceStore(inner http.Handler) http.Handler {
	var receiving sync.Map // URL path → *atomic.Int64, bytes received so far
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stripConditions(r)
		switch {
		case r.Method == http.MethodHead:
			if n, ok := receiving.Load(r.URL.Path); ok {
				w.Header().Set("Content-Length", strconv.FormatInt(n.(*atomic.Int64).Load(), 10))
				w.WriteHeader(http.StatusOK)
				return
			}
		case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" && !r.URL.Query().Has("uploadId"):
			received := new(atomic.Int64)
			receiving.Store(r.URL.Path, received)
			defer receiving.Delete(r.URL.Path)
			var body bytes.Buffer
			_, err := io.Copy(io.MultiWriter(&body, countingWriter{received}), r.Body)
			if err != nil {
				// Cut off: what arrived stays as the object.
				partial := httptest.NewRequestWithContext(r.Context(), http.MethodPut, r.URL.Path, bytes.NewReader(body.Bytes()))
				inner.ServeHTTP(httptest.NewRecorder(), partial)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(&body), int64(body.Len())
		}
		inner.ServeHTTP(w, r)
	})
}

// countingWriter adds the length of every write to n.
type countingWriter struct{ n *atomic.Int64 }

func (c countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}
