package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestLosingSmallWriteOpensNoBackendUpload: of two compare-and-swaps on the
// same ETag, the one that waits for the other's lease and then loses
// answers 412 without ever sending its PUT to the backend (a small body is
// read whole before the lease is sought).
func TestLosingSmallWriteOpensNoBackendUpload(t *testing.T) {
	var puts, headsWhileHeld atomic.Int32
	firstPut := make(chan struct{})
	loserWaits := make(chan struct{})
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/cas") {
			return
		}
		switch {
		case r.Method == http.MethodHead && puts.Load() == 2:
			// The loser's fail-fast HEAD (the object still matches), then
			// the re-check it makes while it waits for the lease: once
			// that one comes, the loser is waiting.
			if headsWhileHeld.Add(1) == 2 {
				close(loserWaits)
			}
		case r.Method == http.MethodPut && puts.Add(1) == 2:
			// The winner's write (the first PUT made the object): hold it
			// at the backend, lease held, until the loser waits for the
			// lease.
			close(firstPut)
			<-loserWaits
		}
	}})
	out, err := f.put(t, "cas", "v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := aws.ToString(out.ETag)

	var wg sync.WaitGroup
	results := make([]error, 2)
	cas := func(i int, body string) {
		defer wg.Done()
		_, results[i] = f.client.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String(bucketName), Key: aws.String("cas"), Body: strings.NewReader(body), IfMatch: aws.String(etag)})
	}
	wg.Add(1)
	go cas(0, "winner")
	<-firstPut // the winner holds the lease and its PUT is at the backend
	wg.Add(1)
	go cas(1, "loser")
	wg.Wait()
	if results[0] != nil || errorCode(results[1]) != "PreconditionFailed" {
		t.Fatalf("winner %v, loser %v; want success and PreconditionFailed", results[0], results[1])
	}
	if n := puts.Load(); n != 2 {
		t.Fatalf("the backend saw %d PUTs after the object was made, want the winner's only: the loser opened an upload", n-1)
	}
}
