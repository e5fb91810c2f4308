package linearizability

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
)

// LostAnswers stands for a network that cuts a connection after the server
// answered (a reset, a load balancer's idle timeout, a client's own
// timeout firing as the answer arrives): about one in OneIn first attempts
// of a conditional write (a PUT carrying If-None-Match or If-Match: a
// PutObject or a CopyObject) reaches s3cond and is answered in full, and
// the client is told the connection was reset. The SDK then retries, as
// it does for any connection error, with the same amz-sdk-invocation-id
// and body.
//
// A receipt answers a retry only while the key is at the version its
// first attempt wrote: one that finds the key moved on is 412, as on S3
// (docs/spec.md §3, "Exactly-once retries"). So that window is kept shut:
// a write chosen to lose its answer has its key to itself, from before
// its first attempt is sent until its retry is answered; every other
// request of the key waits (a per-key read lock), and requests of other
// keys run on. What the checker then judges is exactly whether a retry of
// a committed write is told it failed.
type LostAnswers struct {
	OneIn int
	// Lost counts the answers cut; Committed those of them that were 2xx.
	Lost, Committed atomic.Int64

	mu    sync.Mutex
	rnd   *rand.Rand
	keys  map[string]*sync.RWMutex
	owned map[string]*sync.RWMutex // invocation id → the key it holds
}

// roundTrip sends r on next; it cuts the answer of a chosen first attempt.
func (l *LostAnswers) roundTrip(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	invocation := r.Header.Get("Amz-Sdk-Invocation-Id")
	if held := l.takeOwned(invocation); held != nil {
		defer held.Unlock() // the retry of a cut write: its key was kept for it
		return next.RoundTrip(r)
	}
	key := l.keyLock(r.URL.Path)
	if !l.cuts(r) {
		key.RLock()
		defer key.RUnlock()
		return next.RoundTrip(r)
	}
	key.Lock()
	resp, err := next.RoundTrip(r)
	if err != nil {
		key.Unlock()
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	l.Lost.Add(1)
	if resp.StatusCode/100 == 2 {
		l.Committed.Add(1)
	}
	l.mu.Lock()
	l.owned[invocation] = key
	l.mu.Unlock()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// takeOwned returns the key lock a cut attempt of this invocation holds,
// for its retry to release once answered; nil for any other request.
func (l *LostAnswers) takeOwned(invocation string) *sync.RWMutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.owned[invocation]
	delete(l.owned, invocation)
	return held
}

func (l *LostAnswers) keyLock(path string) *sync.RWMutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys, l.owned = map[string]*sync.RWMutex{}, map[string]*sync.RWMutex{}
	}
	if l.keys[path] == nil {
		l.keys[path] = &sync.RWMutex{}
	}
	return l.keys[path]
}

// cuts tells whether r's answer is to be lost: a first attempt of a
// conditional PUT, one in OneIn.
func (l *LostAnswers) cuts(r *http.Request) bool {
	if r.Method != http.MethodPut || (r.Header.Get("If-None-Match") == "" && r.Header.Get("If-Match") == "") ||
		r.Header.Get("Amz-Sdk-Invocation-Id") == "" || !strings.Contains(r.Header.Get("Amz-Sdk-Request"), "attempt=1;") {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rnd == nil {
		l.rnd = rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	}
	return l.rnd.IntN(l.OneIn) == 0
}

type lossyTransport struct {
	lost *LostAnswers
	next http.RoundTripper
}

func (t lossyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.lost.roundTrip(t.next, r)
}

// noBackoff retries at once: a cut write holds its key until its retry
// is answered, and other clients of the key wait for it.
type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

// lossyClient is Cluster.Client through a LostAnswers, with the SDK's
// standard retries (three attempts, none delayed).
func (c *Cluster) lossyClient(i int, timeout time.Duration, lost *LostAnswers) *s3.Client {
	endpoints := c.Endpoints()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	httpClient := &http.Client{Transport: lossyTransport{lost: lost, next: transport}, Timeout: timeout}
	return e2e.NewS3Client(endpoints[i%len(endpoints)], c.Cred, httpClient, func(o *s3.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.Backoff = noBackoff{}
			so.RateLimiter = ratelimit.None // every lost answer is retried
		})
		o.RetryMaxAttempts = 3
	})
}
