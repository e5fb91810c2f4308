package testservers

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
)

// PrefixIgnoringStore stands for a store whose listings ignore `prefix`
// (ListObjects, ListObjectsV2 and ListMultipartUploads answer with the
// whole bucket), as the store of issue 32's finding 5 did: a client that
// deletes what a prefixed listing returns deletes other people's objects
// there. Everything else is gofakes3's.
func PrefixIgnoringStore(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			q := r.URL.Query()
			if q.Has("prefix") {
				q.Del("prefix")
				r.URL.RawQuery = q.Encode()
			}
		}
		inner.ServeHTTP(w, r)
	})
}

// EndlessAnswerStore stands for a hostile or broken store (a compromised
// endpoint, a misconfigured proxy in front of one): a listing never ends
// (one page of <Contents> elements without end), and every other request
// is answered 500 with an Error document whose message never ends. A
// client that reads a store's answers without bounds runs out of memory.
// The answers stream until the client hangs up.
type EndlessAnswerStore struct {
	listedOnce sync.Once
	listed     chan struct{}
}

// NewEndlessAnswerStore returns the store; Listed is closed at its first listing.
func NewEndlessAnswerStore() *EndlessAnswerStore {
	return &EndlessAnswerStore{listed: make(chan struct{})}
}

// Listed is closed once anyone has asked the store for a listing.
func (e *EndlessAnswerStore) Listed() <-chan struct{} { return e.listed }

// Handler is the store; inner is unused (its answers are all made up).
func (e *EndlessAnswerStore) Handler(http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		q := r.URL.Query()
		if r.Method == http.MethodGet && (q.Has("list-type") || q.Has("uploads") || r.URL.Path == "/"+FaultyStoreBucket) {
			e.noteListing()
			w.WriteHeader(http.StatusOK)
			streamEndless(r.Context(), w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>true</IsTruncated>`,
				"<Contents><Key>unrelated-object</Key><Size>1</Size></Contents>")
			return
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		streamEndless(r.Context(), w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>`, strings.Repeat("x", 1024))
	})
}

func (e *EndlessAnswerStore) noteListing() { e.listedOnce.Do(func() { close(e.listed) }) }

// streamEndless writes head, then unit again and again until the client
// hangs up or the request ends.
func streamEndless(ctx context.Context, w io.Writer, head, unit string) {
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	chunk := strings.Repeat(unit, max(1, (32<<10)/len(unit)))
	for ctx.Err() == nil {
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
	}
}

// SilentStore stands for a hung store (or a proxy in front of one that
// black-holes requests): it reads each request and never answers, until
// the client gives up.
func SilentStore(http.Handler) http.Handler {
	return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
}

// EndlessRaceAnswers stands for a store that answers the probe's
// sequential cases like AWS S3 (NewAtomicStore) and turns hostile once
// many requests are in flight: every racing write on the probe's race
// keys is answered 500 with an Error document that never ends.
func EndlessRaceAnswers(inner http.Handler) http.Handler {
	atomic := NewAtomicStore(inner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if writeOp(r) == "" || !strings.Contains(r.URL.Path, "/race-") || !isConditionalWrite(r) {
			atomic.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		streamEndless(r.Context(), w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>`, strings.Repeat("x", 1024))
	})
}
