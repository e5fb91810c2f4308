package proxy

import "net/http"

// detachedWriter is the client's response writer for a write that may
// outlive its client: once a write to the client fails it swallows the rest,
// so the backend's answer is still read to its end.
type detachedWriter struct {
	http.ResponseWriter
	failed bool
}

func (w *detachedWriter) Write(b []byte) (int, error) {
	if !w.failed {
		if _, err := w.ResponseWriter.Write(b); err != nil {
			w.failed = true
		}
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection.
func (w *detachedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// detached returns a copy of c whose responses are written through a
// detachedWriter.
func (c *call) detached() *call {
	d := *c
	d.w = &detachedWriter{ResponseWriter: c.w}
	return &d
}
