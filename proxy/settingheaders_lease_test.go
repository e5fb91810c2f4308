package proxy

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A write s3cond serialises with a lease enforces If-Match / If-None-Match
// itself: the rebuilt condition headers must not reach the store either
// (versitygw answered 412 to a weak If-Match it was sent).
func TestLeasedWriteSendsNoRebuiltConditions(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/cond-k") {
			mu.Lock()
			sent = append(sent, r.Header.Get("If-Match")+r.Header.Get("If-None-Match"))
			mu.Unlock()
		}
	}})
	first, err := f.put(t, "cond-k", "v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.put(t, "cond-k", "v2", func(in *s3.PutObjectInput) { in.IfMatch = aws.String("W/" + aws.ToString(first.ETag)) }); err != nil {
		t.Fatalf("a weak If-Match on the current ETag: %v", err)
	}
	if got, _ := f.get(t, "cond-k"); got != "v2" {
		t.Fatalf("cond-k = %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || sent[0] != "" || sent[1] != "" {
		t.Fatalf("the store was sent the conditions %q", sent)
	}
}
