package app

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// wantRule checks the rule a lease-free backend serves op with.
func wantRule(t *testing.T, a *App, op operation.Operation, rule leasedwrite.Rule) {
	t.Helper()
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_rule", map[string]string{
		"backend": "default", "operation": op.String(), "rule": rule.String(),
	}); v != 1 {
		t.Errorf("s3cond_backend_conditional_rule{%s,%s} = %v, want 1", op, rule, v)
	}
}

// leaseFreeFront serves a with a front for the test, and its object URL.
func leaseFreeFront(t *testing.T, a *App) func(key string) string {
	front := httptest.NewServer(a.Handler)
	t.Cleanup(front.Close)
	return func(key string) string { return front.URL + "/" + testservers.FaultyStoreBucket + "/" + key }
}

// wantNoLease checks that nothing went through the lease store.
func wantNoLease(t *testing.T, a *App) {
	t.Helper()
	if v := metricValue(t, a.Registry, "s3cond_lease_acquisitions_total", map[string]string{"result": "acquired"}); v != 0 {
		t.Errorf("%v leases acquired, want none on a lease-free backend", v)
	}
}

// On a store whose DeleteObject ignores x-amz-if-match-size and
// -last-modified-time but checks If-Match atomically (SeaweedFS 4.53),
// auto serves without leases and reduces those conditions to If-Match of
// the ETag a HEAD read: a size that does not match is 412 and the object
// stays (the store alone would have deleted it); one that matches deletes.
func TestAutoReducesDeleteConditionsOnSizeTimeIgnoringStore(t *testing.T) {
	a := wantAutoMode(t, testservers.NewSizeTimeIgnoringStore, config.ConditionalNative, map[string]string{
		probe.DeleteIfMatch: string(probe.Partial),
	})
	wantRule(t, a, operation.DeleteObject, leasedwrite.RuleIfMatch)
	url := leaseFreeFront(t, a)
	if status, _ := do(t, signed(t, http.MethodPut, url("sized"), strings.NewReader("12345"), nil)); status != http.StatusOK {
		t.Fatalf("put: %d", status)
	}
	if status, body := do(t, signed(t, http.MethodDelete, url("sized"), nil, http.Header{"X-Amz-If-Match-Size": {"4"}})); status != http.StatusPreconditionFailed {
		t.Fatalf("delete with a size that does not match: %d %s, want 412", status, body)
	}
	if status, _ := do(t, signed(t, http.MethodGet, url("sized"), nil, nil)); status != http.StatusOK {
		t.Fatalf("after a refused delete: GET %d, want the object kept", status)
	}
	if status, body := do(t, signed(t, http.MethodDelete, url("sized"), nil, http.Header{"X-Amz-If-Match-Size": {"5"}})); status != http.StatusNoContent {
		t.Fatalf("delete with the size that matches: %d %s", status, body)
	}
	if status, _ := do(t, signed(t, http.MethodGet, url("sized"), nil, nil)); status != http.StatusNotFound {
		t.Fatalf("after the delete: GET %d, want 404", status)
	}
	wantNoLease(t, a)
}

// deleteObjectsBody is a DeleteObjects document of one entry.
func deleteObjectsBody(key, etag string) (string, http.Header) {
	body := `<Delete><Object><Key>` + key + `</Key><ETag>` + etag + `</ETag></Object></Delete>`
	sum := md5.Sum([]byte(body))
	return body, http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(sum[:])}}
}

// On a store that ignores DeleteObjects entry ETags but checks DeleteObject
// If-Match atomically (versitygw v1.8.0), auto serves without leases and
// sends each conditional entry as a DeleteObject If-Match: a stale entry
// ETag keeps the object (the store alone would have deleted it).
func TestAutoSendsEntriesAsDeletesOnEntryETagIgnoringStore(t *testing.T) {
	a := wantAutoMode(t, testservers.NewEntryETagIgnoringStore, config.ConditionalNative, map[string]string{
		probe.DeleteObjectsETag: string(probe.Ignored), probe.DeleteIfMatch: string(probe.Native),
	})
	wantRule(t, a, operation.DeleteObjects, leasedwrite.RuleEntriesAsDeletes)
	url := leaseFreeFront(t, a)
	if status, _ := do(t, signed(t, http.MethodPut, url("entry"), strings.NewReader("v1"), nil)); status != http.StatusOK {
		t.Fatalf("put: %d", status)
	}
	body, header := deleteObjectsBody("entry", `"00000000000000000000000000000000"`)
	status, answer := do(t, signed(t, http.MethodPost, url("")+"?delete", strings.NewReader(body), header))
	if status != http.StatusOK || !strings.Contains(answer, "PreconditionFailed") {
		t.Fatalf("stale entry: %d %s, want the entry's PreconditionFailed", status, answer)
	}
	if status, _ := do(t, signed(t, http.MethodGet, url("entry"), nil, nil)); status != http.StatusOK {
		t.Fatalf("after a stale entry: GET %d, want the object kept", status)
	}
	body, header = deleteObjectsBody("entry", `"`+md5Hex("v1")+`"`)
	status, answer = do(t, signed(t, http.MethodPost, url("")+"?delete", strings.NewReader(body), header))
	if status != http.StatusOK || !strings.Contains(answer, "<Deleted>") {
		t.Fatalf("matching entry: %d %s, want it deleted", status, answer)
	}
	if status, _ := do(t, signed(t, http.MethodGet, url("entry"), nil, nil)); status != http.StatusNotFound {
		t.Fatalf("after the matching entry: GET %d, want 404", status)
	}
	wantNoLease(t, a)
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 32)
	for _, b := range sum {
		out = append(out, digits[b>>4], digits[b&15])
	}
	return string(out)
}

// On a store whose PutObject If-Match matches only an unquoted ETag (Ceph
// RGW 16.2.15), auto serves without leases and sends the ETag unquoted: a
// client's quoted If-Match that matches succeeds (the store alone answers
// 412), a stale one is 412.
func TestAutoUnquotesIfMatchOnUnquotedIfMatchStore(t *testing.T) {
	a := wantAutoMode(t, testservers.NewUnquotedIfMatchStore, config.ConditionalNative, map[string]string{
		probe.PutIfMatch: string(probe.Partial),
	})
	wantRule(t, a, operation.PutObject, leasedwrite.RuleUnquoted)
	url := leaseFreeFront(t, a)
	if status, _ := do(t, signed(t, http.MethodPut, url("cas"), strings.NewReader("v1"), nil)); status != http.StatusOK {
		t.Fatalf("put: %d", status)
	}
	stale := http.Header{"If-Match": {`"00000000000000000000000000000000"`}}
	if status, _ := do(t, signed(t, http.MethodPut, url("cas"), strings.NewReader("v2"), stale)); status != http.StatusPreconditionFailed {
		t.Fatalf("stale If-Match: %d, want 412", status)
	}
	match := http.Header{"If-Match": {`"` + md5Hex("v1") + `"`}}
	if status, body := do(t, signed(t, http.MethodPut, url("cas"), strings.NewReader("v2"), match)); status != http.StatusOK {
		t.Fatalf("quoted If-Match that matches: %d %s, want 200", status, body)
	}
	if status, body := do(t, signed(t, http.MethodGet, url("cas"), nil, nil)); status != http.StatusOK || body != "v2" {
		t.Fatalf("after the CAS: %d %q", status, body)
	}
	wantNoLease(t, a)
}

// The negative controls: where the one check a rule relies on races
// (DeleteObject If-Match against a CAS PutObject), auto leases everything.
func TestAutoLeasesWhereTheReducedDeleteRaces(t *testing.T) {
	_ = wantAutoMode(t, testservers.NewRacyDeleteSizeTimeIgnoringStore, config.ConditionalLease, map[string]string{
		probe.DeleteIfMatch: string(probe.Partial),
	})
}

func TestAutoLeasesWhereEntriesAsDeletesRace(t *testing.T) {
	_ = wantAutoMode(t, testservers.NewRacyDeleteEntryETagIgnoringStore, config.ConditionalLease, map[string]string{
		probe.DeleteIfMatch: string(probe.Racy), probe.DeleteObjectsETag: string(probe.Ignored),
	})
}
