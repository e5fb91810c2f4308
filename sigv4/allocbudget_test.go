package sigv4

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// Allocation budgets for the per-request paths every small GET and PUT
// pays (issue 35, item 7). testing.AllocsPerRun counts allocations, which do
// not depend on the machine's load, so these fail on a regression whatever
// else shares the cores. Each budget is the count measured when it was set;
// a change that needs more must say why in docs/performance-notes.md.

// assertAllocBudget fails when f allocates more than budget times per run
// on average (a warm-up run first fills the pools and key caches).
func assertAllocBudget(t *testing.T, budget float64, f func()) {
	t.Helper()
	if raceEnabled {
		t.Skip("allocation counts are not the program's under the race detector (sync.Pool drops items at random)")
	}
	got := testing.AllocsPerRun(200, f)
	t.Logf("%.1f allocations per run, budget %.0f", got, budget)
	if got > budget {
		t.Errorf("%.1f allocations per run, budget %.0f", got, budget)
	}
}

// The verifier's share: its Request (which holds the verifying body); the
// signed header names are split as they are used, not into a list.
func TestAllocBudgetVerifyHeaderSignedGet(t *testing.T) {
	r := signedRequest(t, "GET", "/bucket/some/key.txt", "", signOptions{payloadHash: EmptyPayloadHash})
	v := testVerifier()
	assertAllocBudget(t, 1, func() {
		if _, err := v.Verify(r); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAllocBudgetVerifyIntoHeaderSignedGet: with storage of the caller's
// (the proxy's request state) verifying allocates nothing at all, and the
// result is that storage.
func TestAllocBudgetVerifyIntoHeaderSignedGet(t *testing.T) {
	r := signedRequest(t, "GET", "/bucket/some/key.txt", "", signOptions{payloadHash: EmptyPayloadHash})
	v := testVerifier()
	var into Request
	assertAllocBudget(t, 0, func() {
		got, err := v.VerifyInto(r, &into)
		if err != nil {
			t.Fatal(err)
		}
		if got != &into || got.Body != &into.body {
			t.Fatal("VerifyInto did not answer in the storage it was given")
		}
	})
}

// TestAllocBudgetVerifyHeaderSignedGetWithQuery: a header-signed request's
// query is neither decoded into a map nor canonicalised through strings.
func TestAllocBudgetVerifyHeaderSignedGetWithQuery(t *testing.T) {
	r := signedRequest(t, "GET", "/bucket/some/key%20name.txt?versionId=3&partNumber=2", "", signOptions{payloadHash: EmptyPayloadHash})
	v := testVerifier()
	assertAllocBudget(t, 3, func() {
		if _, err := v.Verify(r); err != nil {
			t.Fatal(err)
		}
	})
}

// The presigned URL's query is decoded once (a map and one array of
// values, and the decoded credential).
func TestAllocBudgetVerifyPresignedGet(t *testing.T) {
	r := presignedRequest(t, "GET", "/bucket/some/key.txt", time.Hour, signOptions{})
	v := testVerifier()
	assertAllocBudget(t, 5, func() {
		if _, err := v.Verify(r); err != nil {
			t.Fatal(err)
		}
	})
}

// Re-signing a copy: the request, its header map, the signing headers'
// values and the Authorization string; one more is the fake transport's
// Response.
func TestAllocBudgetResignGet(t *testing.T) {
	rt := NewResigner(&capturingTransport{}, backendCredentials(), backendRegion)
	r := benchOutbound(t)
	assertAllocBudget(t, 6, func() {
		if _, err := rt.RoundTrip(r); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAllocBudgetResignOwnedGet is the path the proxy takes: its own
// request, signed in place (OwnedRoundTripper). Three of the six are the
// test's: the request's header map and value, and the fake's Response.
func TestAllocBudgetResignOwnedGet(t *testing.T) {
	rt := NewResigner(&capturingTransport{}, backendCredentials(), backendRegion).(OwnedRoundTripper)
	r := benchOutbound(t)
	assertAllocBudget(t, 6, func() {
		r.Header = http.Header{"Range": {"bytes=0-4095"}}
		if _, err := rt.RoundTripOwned(r); err != nil {
			t.Fatal(err)
		}
	})
}

// canonicalQueryComponent's shortcut must give what decoding and encoding
// give, for components already canonical and for every kind that is not.
func TestCanonicalQueryComponentMatchesDecodeEncode(t *testing.T) {
	for _, s := range []string{"", "abc", "a-b_c.d~e", "AK%2F20261201%2Fus-east-1", "%2f", "%41", "%4", "%", "%zz", "a+b", "a%20b",
		"a b", "%E2%82%AC", "%e2%82%ac", "x=y", "%7E", "%2D", "%3D%26", "AK/2026"} {
		if got, want := canonicalQueryComponent(s), uriEncode(percentDecode(s, true), true); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}

// parseQuery shares one array among the first values of every name: a
// repeated name must not write into the next name's value.
func TestParseQueryRepeatedNames(t *testing.T) {
	q := parseQuery("a=1&b=2&a=3&c&b=4")
	want := map[string][]string{"a": {"1", "3"}, "b": {"2", "4"}, "c": {""}}
	if len(q) != len(want) {
		t.Fatalf("%v, want %v", q, want)
	}
	for name, values := range want {
		if !slices.Equal(q[name], values) {
			t.Errorf("%s: %q, want %q", name, q[name], values)
		}
	}
}
