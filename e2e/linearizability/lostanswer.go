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
// and body, after its jittered backoff.
//
// Nothing else waits for a cut write: the other clients keep reading and
// writing its key meanwhile, as the writers of a Delta or Lance table race
// on one version. Some of them CAS on the very ETag the cut write
// expected (losers of its race, which take over the lease row its receipt
// is on to re-check, and fail), others read the value it wrote and CAS it
// onward before its retry is answered. A retry of a write that committed
// must get its 200 through all of that (docs/spec.md §3, "Exactly-once
// retries"), and the checker judges whether any was told it failed.
type LostAnswers struct {
	OneIn int
	// Lost counts the answers cut; Committed those of them that were 2xx.
	Lost, Committed atomic.Int64

	mu  sync.Mutex
	rnd *rand.Rand
}

// roundTrip sends r on next; it cuts the answer of a chosen first attempt.
func (l *LostAnswers) roundTrip(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	if !l.cuts(r) {
		return next.RoundTrip(r)
	}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	l.Lost.Add(1)
	if resp.StatusCode/100 == 2 {
		l.Committed.Add(1)
	}
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
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

// maxRetryBackoff caps the SDK's own exponential jittered backoff far
// below its default 20 s, so the workload stays short: a retry comes up to
// maxRetryBackoff after the cut, while the other clients move the key on.
const maxRetryBackoff = 40 * time.Millisecond

// lossyClient is Cluster.Client through a LostAnswers, with the SDK's
// standard retries (three attempts, maxRetryBackoff).
func (c *Cluster) lossyClient(i int, timeout time.Duration, lost *LostAnswers) *s3.Client {
	endpoints := c.Endpoints()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	httpClient := &http.Client{Transport: lossyTransport{lost: lost, next: transport}, Timeout: timeout}
	return e2e.NewS3Client(endpoints[i%len(endpoints)], c.Cred, httpClient, func(o *s3.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.Backoff = retry.NewExponentialJitterBackoff(maxRetryBackoff)
			so.RateLimiter = ratelimit.None // every lost answer is retried
		})
		o.RetryMaxAttempts = 3
	})
}
