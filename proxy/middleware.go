package proxy

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

type ctxKey int

// requestStateKey finds a request's *requestState in its context.
const requestStateKey ctxKey = 0

// requestState is what the middleware keeps per request: its ID, what the
// access log reports, and the status recorder. It is also the context node
// that carries them, so that all of it costs one allocation, where two
// context.WithValue, a requestInfo and a statusRecorder cost four.
type requestState struct {
	context.Context
	id   string
	info requestInfo
	rec  statusRecorder
	// idValue backs the response's x-amz-request-id header.
	idValue [1]string
	// call is serveS3's record of the request.
	call call
	// verified is what the verifier learned (call.verified points here).
	verified sigv4.Request
}

// Value answers requestStateKey with the state itself (a pointer: putting a
// string in an interface would allocate) and passes other keys on.
func (s *requestState) Value(key any) any {
	if key == any(requestStateKey) {
		return s
	}
	return s.Context.Value(key)
}

func stateFrom(ctx context.Context) *requestState {
	s, _ := ctx.Value(requestStateKey).(*requestState)
	return s
}

// requestInfo collects what the access log reports about a request; the
// handler fills it in as it learns.
type requestInfo struct {
	mu          sync.Mutex
	op          operation.Operation
	bucket, key string
	accessKeyID string
	err         *s3err.Error
	leaseWait   time.Duration
	bytesIn     int64
	// leased marks a write taking a lease without condition headers
	// (strict mode); see markLeased.
	leased bool
	// bodyCutByClient marks a response body the client hung up on.
	bodyCutByClient bool
	// body is the request body with its idle timeout (limitBodyIdle),
	// kept here so that it costs no allocation of its own.
	body idleBody
}

func (i *requestInfo) set(f func(*requestInfo)) {
	i.mu.Lock()
	defer i.mu.Unlock()
	f(i)
}

// randomRequestID is 16 upper-case hex digits from 8 random bytes.
func randomRequestID() string {
	const digits = "0123456789ABCDEF"
	var b [8]byte
	_, _ = rand.Read(b[:])
	var id [16]byte
	for i, c := range b {
		id[2*i], id[2*i+1] = digits[c>>4], digits[c&0xF]
	}
	return string(id[:])
}

// newCall starts serveS3's record of a request, as one it refuses until it
// is classified; in the request state's allocation when there is one.
func newCall(w http.ResponseWriter, r *http.Request) *call {
	s := stateFrom(r.Context())
	if s == nil {
		return &call{w: w, r: r, info: &requestInfo{}, op: operation.Refused}
	}
	s.call = call{w: w, r: r, id: s.id, info: &s.info, op: operation.Refused, verified: &s.verified}
	return &s.call
}

func requestID(ctx context.Context) string {
	if s := stateFrom(ctx); s != nil {
		return s.id
	}
	return ""
}

func infoFrom(ctx context.Context) *requestInfo {
	if s := stateFrom(ctx); s != nil {
		return &s.info
	}
	return &requestInfo{}
}

// requestIDHeader is the response header naming s3cond's request ID,
// spelt as S3 sends it.
const requestIDHeader = "x-amz-request-id"

// hostIDHeader is S3's x-amz-id-2, spelt as S3 sends it.
const hostIDHeader = "x-amz-id-2"

// requestIDMiddleware gives every request s3cond's own x-amz-request-id, set
// before anything else can answer.
func (p *Proxy) requestIDMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state := &requestState{Context: r.Context(), id: p.newRequestID()}
		state.idValue[0] = state.id
		// S3's spelling, not Go's canonical X-Amz-Request-Id: net/http
		// writes a key as it is stored.
		w.Header()[requestIDHeader] = state.idValue[:]
		// S3 clients read x-amz-id-2 as the extended request ID; s3cond
		// has no host ID of its own to give, so it is the request ID too
		// (never the store's, which names the store's host).
		w.Header()[hostIDHeader] = state.idValue[:]
		next.ServeHTTP(w, r.WithContext(state))
	})
}

// statusRecorder remembers the status, counts the bytes sent, and renews
// the connection's write deadline as each write starts (writeIdle).
type statusRecorder struct {
	http.ResponseWriter
	status    int
	bytes     int64
	conn      connDeadlines // nil: no deadlines (a test recorder)
	writeIdle time.Duration
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.renewWriteDeadline()
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// FlushError is what http.ResponseController's Flush calls: a flush is a
// write too.
func (s *statusRecorder) FlushError() error {
	s.renewWriteDeadline()
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// ReadFrom keeps the connection's own ReadFrom reachable, so that a
// response body from SpliceTransport is spliced rather than copied.
func (s *statusRecorder) ReadFrom(src io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	var n int64
	var err error
	rf, ok := s.ResponseWriter.(io.ReaderFrom)
	switch {
	case ok && s.conn != nil && s.writeIdle > 0:
		n, err = s.readFromInSteps(rf, src)
	case ok:
		n, err = rf.ReadFrom(src)
	default:
		n, err = io.Copy(writerOnly{s.ResponseWriter}, src)
	}
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// accessLogMiddleware writes one structured line per request, and reports
// the request to the metrics observer. It names the access key ID, never a
// secret or signature.
func (p *Proxy) accessLogMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var rec *statusRecorder
		if state := stateFrom(r.Context()); state != nil {
			rec = &state.rec // in the request state's allocation
		} else {
			rec = new(statusRecorder)
		}
		*rec = statusRecorder{ResponseWriter: w, conn: deadlinesOf(w), writeIdle: p.writeIdleTimeout}
		// A deadline left by the previous request on this connection must
		// not cut this one's first write (a 100 Continue, say); the last
		// one, set as the handler returns, bounds net/http's final flush.
		rec.renewWriteDeadline()
		defer rec.renewWriteDeadline()
		// Deferred, so that a response aborted with http.ErrAbortHandler
		// is logged and counted too, on its way up to net/http.
		defer p.logRequest(r, rec, start)
		next.ServeHTTP(rec, r)
	})
}

// logRequest writes the access log line and reports the request to the
// metrics observer.
func (p *Proxy) logRequest(r *http.Request, rec *statusRecorder, start time.Time) {
	duration := time.Since(start)
	if rec.status == 0 {
		rec.status = http.StatusOK // what net/http sends for a handler that wrote nothing
	}
	info := infoFrom(r.Context())
	info.mu.Lock()
	defer info.mu.Unlock()
	status := reportedStatus(r.Context(), info, rec.status)
	outcome := conditionalOutcome(info.op, r.Header, info.leased, status)
	p.observer.ObserveRequest(RequestRecord{
		Operation:          info.op.String(),
		Status:             status,
		Duration:           duration,
		BytesIn:            info.bytesIn,
		BytesOut:           rec.bytes,
		ConditionalOutcome: outcome,
		SignatureFailure:   signatureFailure(info.err, info.accessKeyID != ""),
	})
	ev := p.log.Info()
	if status >= 500 {
		ev = p.log.Warn()
	}
	ev = ev.Str("request_id", requestID(r.Context())).
		Str("method", r.Method).
		Str("operation", info.op.String()).
		Str("bucket", info.bucket).
		Str("key", info.key).
		Str("access_key_id", info.accessKeyID).
		Int("status", status).
		Int64("bytes_out", rec.bytes).
		Int64("bytes_in", info.bytesIn).
		Dur("duration_ms", duration)
	if info.leaseWait > 0 {
		ev = ev.Dur("lease_wait_ms", info.leaseWait)
	}
	if outcome != "" {
		ev = ev.Str("conditional", outcome)
	}
	if status == StatusClientClosedRequest && info.bodyCutByClient {
		ev = ev.Int("status_sent", rec.status) // the head went out before the hang-up
	}
	if info.err != nil {
		if status != StatusClientClosedRequest { // the client was gone: no error reached it
			ev = ev.Str("error_code", string(info.err.Code))
		}
		if info.err.Cause != nil {
			ev = ev.AnErr("cause", info.err.Cause)
		}
	}
	ev.Msg("request")
}

// recoverMiddleware turns a panic into a 500 InternalError for the client
// and a log line with the request ID, instead of a dropped connection.
func (p *Proxy) recoverMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil || v == http.ErrAbortHandler {
				if v != nil {
					panic(v)
				}
				return
			}
			p.log.Error().Str("request_id", requestID(r.Context())).Interface("panic", v).Msg("handler panicked")
			s3err.Write(w, r, s3err.New(s3err.InternalError), requestID(r.Context()))
		}()
		next.ServeHTTP(w, r)
	})
}

// writerOnly and readerOnly hide ReadFrom and WriteTo, so that io.Copy
// between them does not recurse into them.
type writerOnly struct{ io.Writer }
type readerOnly struct{ io.Reader }
