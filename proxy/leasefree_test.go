package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/testservers"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// sameSizeRewriter is a backend hook standing for writers that replace an
// object with another of the same size between s3cond's HEAD and its
// DeleteObject (times times, then no more): the reduced delete's If-Match
// then names a version that is gone.
type sameSizeRewriter struct {
	key      string
	endpoint string
	times    int64
	deletes  atomic.Int64
}

func (w *sameSizeRewriter) hook(t *testing.T) func(*http.Request) {
	return func(r *http.Request) {
		if r.Method != http.MethodDelete || !strings.HasSuffix(r.URL.Path, "/"+w.key) {
			return
		}
		if n := w.deletes.Add(1); n > w.times {
			return
		}
		body := "rewrite" + string(rune('0'+w.deletes.Load()%10))
		req, _ := http.NewRequest(http.MethodPut, w.endpoint+"/"+bucketName+"/"+w.key, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("the rewrite: %v", err)
			return
		}
		resp.Body.Close()
	}
}

// reducedDeleteFixture serves a store whose DeleteObject ignores size and
// time conditions (SeaweedFS 4.53) without leases, DeleteObject reduced to
// If-Match, with the rewriter in front.
func reducedDeleteFixture(t *testing.T, times int64) (*fixture, *sameSizeRewriter) {
	w := &sameSizeRewriter{key: "reduced", times: times}
	f := newFixtureWith(t, fixtureOptions{native: true, backendHook: w.hook(t), storeWrap: objectsOnly(testservers.NewSizeTimeIgnoringStore),
		rules: leasedwrite.Rules{operation.DeleteObject: leasedwrite.RuleIfMatch}})
	w.endpoint = f.backend.URL
	return f, w
}

// objectsOnly puts quirks in front of the objects only: the bucket's own
// requests go to gofakes3 (whose automatic buckets a HEAD would create).
func objectsOnly(quirks func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(inner http.Handler) http.Handler {
		quirky := quirks(inner)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(strings.Trim(r.URL.Path, "/"), "/") {
				quirky.ServeHTTP(w, r)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
}

func deleteOfSize(f *fixture, key string, size int64) error {
	_, err := f.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key), IfMatchSize: aws.Int64(size)})
	return err
}

// A size condition that held on every version the object had is never
// answered 412: when the version read was replaced (by one of the same
// size) before the store got the delete, s3cond reads again and deletes.
func TestReducedDeleteReadsAgainWhenTheObjectChanged(t *testing.T) {
	f, w := reducedDeleteFixture(t, 1)
	f.put(t, "reduced", "original", nil)
	if err := deleteOfSize(f, "reduced", 8); err != nil {
		t.Fatalf("delete of the right size: %v", err)
	}
	if n := w.deletes.Load(); n != 2 {
		t.Errorf("%d DeleteObjects reached the store, want 2 (the first met a replaced version)", n)
	}
	if _, err := f.get(t, "reduced"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("after the delete: %v, want NoSuchKey", err)
	}
}

// A key replaced on every attempt is answered 409, as S3 answers a write
// that met concurrent ones, after a bounded number of attempts.
func TestReducedDeleteGivesUpWithAConflict(t *testing.T) {
	f, w := reducedDeleteFixture(t, 1000)
	f.put(t, "reduced", "original", nil)
	if err := deleteOfSize(f, "reduced", 8); errorCode(err) != "ConditionalRequestConflict" {
		t.Fatalf("delete of a key replaced on every attempt: %v, want ConditionalRequestConflict", err)
	}
	if n := w.deletes.Load(); n != reducedAttempts {
		t.Errorf("%d attempts, want %d", n, reducedAttempts)
	}
}

// A size that does not match is answered from the HEAD: nothing is sent.
func TestReducedDeleteRefusesFromTheHead(t *testing.T) {
	f, w := reducedDeleteFixture(t, 0)
	f.put(t, "reduced", "original", nil)
	if err := deleteOfSize(f, "reduced", 7); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("delete of the wrong size: %v, want PreconditionFailed", err)
	}
	if n := w.deletes.Load(); n != 0 {
		t.Errorf("%d DeleteObjects sent for a condition the HEAD refuses", n)
	}
	if got, err := f.get(t, "reduced"); err != nil || got != "original" {
		t.Fatalf("after the refusal: %q %v", got, err)
	}
}
