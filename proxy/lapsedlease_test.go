package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
)

// stalledRenewals is the in-memory lease table with every renewal hanging
// until its context ends: what a holder's renewals amount to while the
// process is paused (SIGSTOP) or its lease store frozen. It says on
// renewing when the first renewal began.
func stalledRenewals(renewing chan<- time.Time) *leasetest.Table {
	var once sync.Once
	return leasetest.NewPlain(leasetest.Hooks{Before: func(ctx context.Context, c leasetest.Call) error {
		if c.Op != leasetest.OpReplace || c.Released {
			return nil
		}
		once.Do(func() { renewing <- time.Now() })
		<-ctx.Done()
		return ctx.Err()
	}})
}

// lateAnswer hands the store's answer to the conditional PUT of key back
// only after the write's lease is past its deadline: a holder that wakes
// from a pause to find the store's 200 waiting, before its renewal
// goroutine has noticed anything.
type lateAnswer struct {
	next     http.RoundTripper
	key      string
	renewing <-chan time.Time
	timeout  time.Duration
}

func (l lateAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/"+l.key) {
		return resp, err
	}
	// The lease was renewed last when it was taken, half a timeout before
	// the renewal began: a full timeout after that, it has lapsed.
	renewStart := <-l.renewing
	<-time.After(time.Until(renewStart.Add(l.timeout)) + time.Millisecond)
	return resp, nil
}

// TestStoreAnswerAfterTheLeaseLapsedIsNot200: the store acknowledges a
// conditional PUT only after the write's lease lapsed (renewals stalled, as
// while the holder was paused). A contender may have been acknowledged on
// the key meanwhile, so s3cond must not answer the write 200 (issue 24,
// item 2: the SIGSTOPped holder answered its own client 200, a second
// acknowledged If-None-Match: * create). It answers 503 and leaves the
// lease to expire.
func TestStoreAnswerAfterTheLeaseLapsedIsNot200(t *testing.T) {
	const timeout = 400 * time.Millisecond
	renewing := make(chan time.Time, 1)
	gf := newGuardFixture(t, guardOptions{table: stalledRenewals(renewing), lease: leasetest.Timing{Timeout: timeout,
		PollInterval: 20 * time.Millisecond, WaitBudget: 3 * time.Second}})
	client := gf.proxy.backend.Client
	gf.proxy.backend.Client = &http.Client{Transport: lateAnswer{next: client.Transport, key: "paused",
		renewing: renewing, timeout: timeout}, CheckRedirect: client.CheckRedirect}
	_, err := gf.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucketName),
		Key: aws.String("paused"), Body: strings.NewReader("late"), IfNoneMatch: aws.String("*")},
		func(o *s3.Options) { o.RetryMaxAttempts = 1 }) // a retry would meet the stored object: 412
	if code := errorCode(err); code != "ServiceUnavailable" {
		t.Fatalf("a write the store answered after its lease lapsed: %v (code %q), want ServiceUnavailable", err, code)
	}
	if row := gf.table.Row(t, bucketName+"/paused", "*"); row == nil || row.Released {
		t.Fatalf("the lapsed write's lease row is %+v; want it left held, to expire", row)
	}
}
