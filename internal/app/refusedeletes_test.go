package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// versitygw v1.8.0 as the probe sees it: copy conditions ignored,
// DeleteObject If-Match partial with no remedy (a missing key's 204; and
// its check races PutObject inside the store), DeleteObjects' entry ETags
// ignored. Only refusing conditional deletes, with the copy emulated,
// leaves every served operation a rule; a racy PutObject still leases.
func TestRefusedDeletesLeaveVersityGWLeaseFree(t *testing.T) {
	versity := map[string]probe.Verdict{probe.DeleteIfMatch: probe.Partial, probe.DeleteObjectsETag: probe.Ignored}
	both := planOptions{emulateCopy: true, refuseDeletes: true}
	for _, c := range []struct {
		name      string
		opts      planOptions
		verdicts  map[string]probe.Verdict
		leaseFree bool
		wanting   string
	}{
		{"copy emulated, deletes served", planOptions{emulateCopy: true}, versity, false, probe.DeleteIfMatch},
		{"deletes refused, copy not emulated", planOptions{refuseDeletes: true}, versity, false, probe.CopyIfNoneMatch},
		{"deletes refused, copy emulated", both, versity, true, ""},
		{"deletes refused, copy emulated, PutObject If-Match racy", both,
			map[string]probe.Verdict{probe.DeleteIfMatch: probe.Partial, probe.PutIfMatch: probe.Racy}, false, probe.PutIfMatch},
	} {
		rules, wanting, ok := leaseFreeRules(versityV180(c.verdicts).Capabilities, c.opts)
		if ok != c.leaseFree || wanting != c.wanting {
			t.Errorf("%s: lease-free %v wanting %q, want %v wanting %q", c.name, ok, wanting, c.leaseFree, c.wanting)
			continue
		}
		if !ok {
			continue
		}
		for op, want := range map[operation.Operation]leasedwrite.Rule{
			operation.PutObject: leasedwrite.RuleNative, operation.CopyObject: leasedwrite.RuleEmulated,
			operation.DeleteObject: leasedwrite.RuleRefused, operation.DeleteObjects: leasedwrite.RuleRefused,
		} {
			if rules[op] != want {
				t.Errorf("%s: %s's rule %v, want %v", c.name, op, rules[op], want)
			}
		}
	}
	// A store that would serve conditional deletes natively still has them
	// refused where the backend says so: the setting is what clients see.
	rules, _, ok := leaseFreeRules(reportWith(nil).Capabilities, planOptions{refuseDeletes: true})
	if !ok || rules[operation.DeleteObject] != leasedwrite.RuleRefused {
		t.Errorf("atomic store, deletes refused: lease-free %v, DeleteObject's rule %v, want refused", ok, rules[operation.DeleteObject])
	}
}

// On a store whose DeleteObject If-Match races its PutObject (and whose
// DeleteObjects ignores entry ETags), auto leases
// (TestAutoLeasesWhereEntriesAsDeletesRace); with
// refuse_conditional_deletes it serves without leases: a CAS is the
// store's, a conditional delete 501 and the object kept.
func TestAutoServesLeaseFreeWithConditionalDeletesRefused(t *testing.T) {
	cfg := faultyBackendConfig(t, testservers.StartFaultyStore(t, testservers.NewRacyDeleteEntryETagIgnoringStore), config.ConditionalAuto)
	cfg.Backend.RefuseConditionalDeletes = true
	a := build(t, cfg)
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{
		"backend": "default", "configured": "auto", "mode": config.ConditionalNative,
	}); v != 1 {
		t.Fatalf("s3cond_backend_conditional_mode{auto,native} = %v, want 1", v)
	}
	wantRule(t, a, operation.DeleteObject, leasedwrite.RuleRefused)
	wantRule(t, a, operation.DeleteObjects, leasedwrite.RuleRefused)
	url := leaseFreeFront(t, a)
	if status, body := do(t, signed(t, http.MethodPut, url("k"), strings.NewReader("v1"), http.Header{"If-None-Match": {"*"}})); status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	if status, body := do(t, signed(t, http.MethodDelete, url("k"), nil, http.Header{"If-Match": {`"0123"`}})); status != http.StatusNotImplemented || !strings.Contains(body, "NotImplemented") {
		t.Fatalf("conditional delete: %d %s, want 501 NotImplemented", status, body)
	}
	if status, body := do(t, signed(t, http.MethodGet, url("k"), nil, nil)); status != http.StatusOK || body != "v1" {
		t.Fatalf("after the refused delete: %d %q", status, body)
	}
	wantNoLease(t, a)
}
