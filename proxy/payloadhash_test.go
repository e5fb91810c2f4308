package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/s3cond/s3cond/internal/testkit"
)

// TestPayloadHashSentToTheBackend checks backend.payload_hash: a body whose
// hex SHA-256 the client signed reaches the backend as UNSIGNED-PAYLOAD by
// default (s3cond verified it), and with its hash under "forward".
func TestPayloadHashSentToTheBackend(t *testing.T) {
	const body = "hashed body"
	hash := payloadHashOf([]byte(body))
	for _, tc := range []struct {
		forward bool
		want    string
	}{
		{forward: false, want: "UNSIGNED-PAYLOAD"},
		{forward: true, want: hash},
	} {
		var mu sync.Mutex
		var got []string
		f := newFixtureWith(t, fixtureOptions{forwardPayloadHash: tc.forward, backendHook: func(r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/hashed") {
				mu.Lock()
				got = append(got, r.Header.Get("X-Amz-Content-Sha256"))
				mu.Unlock()
			}
		}})
		req := httptest.NewRequest(http.MethodPut, f.proxyURL+"/"+bucketName+"/hashed", strings.NewReader(body))
		creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
		testkit.Sign(t, req, creds, hash)
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("forward=%v: PUT answered %d %s", tc.forward, rec.Code, rec.Body.String())
		}
		if stored, err := f.get(t, "hashed"); err != nil || stored != body {
			t.Fatalf("forward=%v: stored %q, %v", tc.forward, stored, err)
		}
		mu.Lock()
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("forward=%v: backend got x-amz-content-sha256 %q, want [%s]", tc.forward, got, tc.want)
		}
		mu.Unlock()
	}
}
