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

// signallingTable stands for a DynamoDB lease table that tells (closes
// created) when the first create of a row reached it.
func signallingTable(created chan struct{}) *leasetest.Table {
	var once sync.Once
	return leasetest.NewPlain(leasetest.Hooks{After: func(c leasetest.Call, _ error) {
		if c.Op == leasetest.OpCreate {
			once.Do(func() { close(created) })
		}
	}})
}

// requestLog counts the backend's requests on one key by method.
type requestLog struct {
	mu     sync.Mutex
	key    string
	counts map[string]int
}

func (l *requestLog) see(r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/"+l.key) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[r.Method]++
}

func (l *requestLog) take() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.counts
	l.counts = map[string]int{}
	return out
}

// TestConditionalWritesAtTheRoundTripFloor: a create on a new key and a
// compare-and-swap on a fresh version send the store two requests (the
// HEAD and the write: no re-check under a lease whose row they created),
// and the lease is sought while the HEAD runs: the HEAD here answers only
// once the lease table has seen the create.
func TestConditionalWritesAtTheRoundTripFloor(t *testing.T) {
	created := make(chan struct{})
	table := signallingTable(created)
	log := &requestLog{key: "floor", counts: map[string]int{}}
	overlapped := make(chan bool, 1)
	f := newFixtureWith(t, fixtureOptions{leaseTable: table, backendHook: func(r *http.Request) {
		log.see(r)
		if r.Method != http.MethodHead || !strings.HasSuffix(r.URL.Path, "/floor") {
			return
		}
		select {
		case <-created:
			select {
			case overlapped <- true:
			default:
			}
		case <-time.After(5 * time.Second):
			overlapped <- false
		}
	}})

	out, err := f.put(t, "floor", "v1", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !<-overlapped {
		t.Fatal("the HEAD ran without the lease being sought beside it")
	}
	if got := log.take(); got[http.MethodHead] != 1 || got[http.MethodPut] != 1 {
		t.Fatalf("a create on a new key sent the store %v, want one HEAD and one PUT", got)
	}

	if _, err := f.put(t, "floor", "v2", func(in *s3.PutObjectInput) { in.IfMatch = out.ETag }); err != nil {
		t.Fatalf("compare-and-swap: %v", err)
	}
	if got := log.take(); got[http.MethodHead] != 1 || got[http.MethodPut] != 1 {
		t.Fatalf("a compare-and-swap on a fresh version sent the store %v, want one HEAD and one PUT", got)
	}
}

// TestLosingWriteAnswersAfterOneHead: a compare-and-swap on a stale ETag
// answers 412 after one HEAD, sends no PUT, and leaves no lease held (the
// lease sought beside the HEAD is released in the background).
func TestLosingWriteAnswersAfterOneHead(t *testing.T) {
	table := leasetest.New(leasetest.Hooks{})
	log := &requestLog{key: "lose", counts: map[string]int{}}
	f := newFixtureWith(t, fixtureOptions{leaseTable: table, backendHook: log.see})
	if _, err := f.put(t, "lose", "v1", nil); err != nil {
		t.Fatal(err)
	}
	log.take()
	_, err := f.put(t, "lose", "v2", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"0123456789abcdef0123456789abcdef"`) })
	if errorCode(err) != "PreconditionFailed" {
		t.Fatalf("stale compare-and-swap = %v, want PreconditionFailed", err)
	}
	if got := log.take(); got[http.MethodHead] != 1 || got[http.MethodPut] != 0 {
		t.Fatalf("a losing write sent the store %v, want one HEAD and no PUT", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.handler.(*Proxy).WaitForReleases(ctx); err != nil {
		t.Fatal(err)
	}
	if row := table.Row(t, bucketName+"/lose", `"0123456789abcdef0123456789abcdef"`); row != nil && !row.Released {
		t.Fatalf("the losing write left its lease row held: %+v", row)
	}
}
