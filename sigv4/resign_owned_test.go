package sigv4

import (
	"net/http"
	"testing"
	"time"
)

// TestRoundTripOwnedSignsInPlace: a request given away is itself sent, its
// inbound Authorization replaced, and it carries exactly the headers and
// signature RoundTrip gives a copy of the same request at the same instant.
func TestRoundTripOwnedSignsInPlace(t *testing.T) {
	for _, tc := range []struct {
		name, method, key, rawQuery string
		length                      int64
	}{
		{"GET of an encoded key", http.MethodGet, "dir/with space/ünï", "partNumber=1", 0},
		{"PUT with a body", http.MethodPut, "k", "", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &capturingTransport{}
			rt := NewResigner(next, backendCredentials(), backendRegion).(*resigner)
			at := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
			rt.clock = signingClock{now: func() time.Time { return at }}

			build := func() *http.Request {
				r := outboundRequest(t, "http://backend.internal:9000", tc.method, tc.key, tc.rawQuery, nil, 0)
				if tc.length > 0 {
					r.Body, r.ContentLength = neverReadBody{t}, tc.length
				}
				r.Header.Set("Authorization", "AWS4-HMAC-SHA256 the client's")
				r.Header.Set("X-Amz-Meta-Note", "kept")
				return r
			}
			copied := build()
			if _, err := rt.RoundTrip(copied); err != nil {
				t.Fatal(err)
			}
			viaCopy := next.got

			owned := build()
			if _, err := rt.RoundTripOwned(owned); err != nil {
				t.Fatal(err)
			}
			if next.got != owned {
				t.Fatal("RoundTripOwned sent a copy, not the request it was given")
			}
			if got, want := owned.Header.Get("Authorization"), viaCopy.Header.Get("Authorization"); got != want || got == "AWS4-HMAC-SHA256 the client's" {
				t.Fatalf("Authorization in place %q, on a copy %q", got, want)
			}
			if len(owned.Header) != len(viaCopy.Header) {
				t.Fatalf("headers in place %v, on a copy %v", owned.Header, viaCopy.Header)
			}
			for name, values := range viaCopy.Header {
				if got := owned.Header.Values(name); len(got) != 1 || got[0] != values[0] {
					t.Fatalf("%s in place %q, on a copy %q", name, got, values)
				}
			}
			if owned.URL.EscapedPath() != viaCopy.URL.EscapedPath() {
				t.Fatalf("path in place %q, on a copy %q", owned.URL.EscapedPath(), viaCopy.URL.EscapedPath())
			}
		})
	}
}
