package proxy

import (
	"io"
	"net/http"
	"time"
)

// How long, and how much, s3cond keeps reading a body it did not want after
// answering with an error. Go's own server waits as long before it closes
// a connection with unread input (its RST avoidance delay).
const (
	drainTimeLimit = 500 * time.Millisecond
	drainByteLimit = 64 << 20
)

// drainUnreadBody lets a client that is still sending its body read the
// error s3cond answered before reading it.
//
// Without it, net/http closes the connection as soon as the handler
// returns; with request bytes still unread, the kernel then resets it, and
// a reset discards what the client had not read yet: the answer. The Go
// SDK, which sends Expect: 100-continue and the body at once, saw "request
// send failed" instead of a 400 for a large UploadPart refused on a header.
// So the answer is flushed (net/http marks it Connection: close, so the
// client stops sending once it has read it), and the body is read and
// discarded until the client stops, or for at most drainTimeLimit and
// drainByteLimit.
func drainUnreadBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	if err := rc.SetReadDeadline(time.Now().Add(drainTimeLimit)); err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, drainByteLimit))
	_ = rc.SetReadDeadline(time.Time{})
}
