package proxy

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// lateContender is a backend hook standing for a contender whose write
// lands at the store after s3cond's last check of a key and before its own
// write of it does (s3cond paused past its lease): the first conditional
// PUT of key that reaches the store finds the contender's object there.
// gofakes3 evaluates If-None-Match and If-Match on PutObject itself.
type lateContender struct {
	key      string
	endpoint string // the backend's, set once it runs
	once     sync.Once
}

func (l *lateContender) hook(t *testing.T) func(*http.Request) {
	return func(r *http.Request) {
		if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/"+l.key) || r.Header.Get("X-Late-Contender") != "" {
			return
		}
		l.once.Do(func() {
			req, _ := http.NewRequest(http.MethodPut, l.endpoint+"/"+bucketName+"/"+l.key, strings.NewReader("contender"))
			req.Header.Set("X-Late-Contender", "1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("the contender's write: %v", err)
				return
			}
			resp.Body.Close()
		})
	}
}

func lateContenderFixture(t *testing.T, checks leasedwrite.StoreChecks) (*fixture, *lateContender) {
	late := &lateContender{key: "late"}
	f := newFixtureWith(t, fixtureOptions{backendHook: late.hook(t), storeChecks: checks})
	late.endpoint = f.backend.URL
	return f, late
}

// A leased create whose store checks If-None-Match: * is sent with it, so a
// contender's object that reached the store after s3cond's check makes the
// store refuse the late write (412), where it would otherwise overwrite it.
func TestLeasedCreateSendsTheStoreItsCondition(t *testing.T) {
	f, _ := lateContenderFixture(t, leasedwrite.StoreChecks{IfNoneMatch: map[operation.Operation]bool{operation.PutObject: true}})
	_, err := f.put(t, "late", "late writer", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if code := errorCode(err); code != "PreconditionFailed" {
		t.Fatalf("late create: %v, want the store's PreconditionFailed", err)
	}
	if got, _ := f.get(t, "late"); got != "contender" {
		t.Fatalf("the key holds %q, want the contender's object", got)
	}
}

// Without the store's check the same late write overwrites: what the
// lease alone cannot stop once its holder overslept it.
func TestLeasedCreateWithoutStoreCheckOverwritesALateContender(t *testing.T) {
	f, _ := lateContenderFixture(t, leasedwrite.StoreChecks{})
	if _, err := f.put(t, "late", "late writer", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
		t.Fatalf("late create without the store's check: %v", err)
	}
	if got, _ := f.get(t, "late"); got != "late writer" {
		t.Fatalf("the key holds %q, want the late writer's (the store did not check)", got)
	}
}

// A CAS sends the store If-Match with the one checked ETag, in its
// canonical form; If-Match: * and tag lists are not sent.
func TestLeasedCASSendsTheStoreItsETag(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	hook := func(r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/cas") {
			mu.Lock()
			seen = append(seen, r.Header.Get("If-Match"))
			mu.Unlock()
		}
	}
	f := newFixtureWith(t, fixtureOptions{backendHook: hook, storeChecks: leasedwrite.StoreChecks{IfMatch: map[operation.Operation]bool{operation.PutObject: true}}})
	first, err := f.put(t, "cas", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := strings.Trim(aws.ToString(first.ETag), `"`)
	if _, err := f.put(t, "cas", "2", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etag) }); err != nil {
		t.Fatalf("CAS: %v", err)
	}
	if _, err := f.put(t, "cas", "3", func(in *s3.PutObjectInput) { in.IfMatch = aws.String("*") }); err != nil {
		t.Fatalf("If-Match: *: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"", `"` + etag + `"`, ""}
	if len(seen) != len(want) {
		t.Fatalf("store saw If-Match %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("store saw If-Match %q, want %q", seen, want)
		}
	}
}
