package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// A store found atomic at start-up is served natively; when a background
// re-probe finds its CopyObject racy, the backend switches to leasing at
// once: the next conditional write takes a lease, and the switch shows in
// s3cond_backend_downgrades_total and the mode gauge.
func TestReprobeSwitchesAWorseStoreToLeasing(t *testing.T) {
	store := testservers.NewRacyLaterStore()
	cfg := faultyBackendConfig(t, testservers.StartFaultyStore(t, store.Fault), config.ConditionalAuto)
	cfg.Backend.ReprobeInterval = 20 * time.Millisecond
	downgraded := make(chan struct{})
	var once sync.Once
	a, err := buildWith(context.Background(), cfg, zerolog.Nop(), reprobeSettings{raceTime: 200 * time.Millisecond,
		done: func(switched bool) {
			if switched {
				once.Do(func() { close(downgraded) })
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	mode := func(m string) float64 {
		return metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{"backend": "default", "mode": m})
	}
	if mode("native") != 1 {
		t.Fatal("the atomic store is not served natively at start")
	}
	front := httptest.NewServer(a.Handler)
	defer front.Close()
	leases := func() float64 {
		return metricValue(t, a.Registry, "s3cond_lease_acquisitions_total", map[string]string{"result": "acquired"})
	}
	create := func(key string) {
		t.Helper()
		url := front.URL + "/" + testservers.FaultyStoreBucket + "/" + key
		if status, body := do(t, signed(t, http.MethodPut, url, strings.NewReader("x"), http.Header{"If-None-Match": {"*"}})); status != http.StatusOK {
			t.Fatalf("conditional create of %s: %d %s", key, status, body)
		}
	}
	create("before-the-switch")
	if n := leases(); n != 0 {
		t.Fatalf("a native conditional write took %v leases", n)
	}

	store.BecomeRacy()
	select {
	case <-downgraded:
	case <-time.After(2 * time.Minute):
		t.Fatal("no re-probe switched the backend to leasing")
	}
	create("after-the-switch")
	if n := leases(); n != 1 {
		t.Errorf("the conditional write after the switch took %v leases, want 1", n)
	}
	if v := metricValue(t, a.Registry, "s3cond_backend_downgrades_total", map[string]string{"backend": "default"}); v != 1 {
		t.Errorf("s3cond_backend_downgrades_total = %v, want 1", v)
	}
	if mode("lease") != 1 || mode("native") != 0 {
		t.Errorf("mode gauge: lease %v, native %v; want 1 and 0", mode("lease"), mode("native"))
	}
}

// BenchmarkStartupOnSlowLosers times Build under conditional: auto on a
// store standing for SeaweedFS 4.53 (losing writers wait a second), every
// start-up check included and no kept verdict: the target is 5 s.
//
//	go test -run '^$' -bench StartupOnSlowLosers -benchtime 1x ./internal/app/
func BenchmarkStartupOnSlowLosers(b *testing.B) {
	endpoint := testservers.StartFaultyStore(b, testservers.NewSlowLosersStore)
	for b.Loop() {
		cfg := config.Default()
		cfg.DataDir = b.TempDir()
		cfg.Lease.Store = config.LeaseStoreMemory
		cfg.Backend.Type, cfg.Backend.Endpoint, cfg.Backend.Conditional = config.BackendS3, endpoint, config.ConditionalAuto
		cfg.Backend.Credentials = config.Credentials{Source: config.CredentialsStatic, AccessKeyID: "k", SecretAccessKey: "s"}
		cfg.Backend.ProbeBucket = testservers.FaultyStoreBucket
		a, err := Build(context.Background(), cfg, zerolog.Nop())
		if err != nil {
			b.Fatal(err)
		}
		if v := metricValue(b, a.Registry, "s3cond_backend_conditional_mode", map[string]string{"mode": "native"}); v != 1 {
			b.Error("the slow but atomic store is not served natively")
		}
		_ = a.Close(context.Background())
	}
}

// reportWith is a report where every capability is native but those given.
func reportWith(verdicts map[string]probe.Verdict) probe.Report {
	caps := map[string]probe.Result{}
	for _, name := range probe.AllCapabilities {
		caps[name] = probe.Result{Verdict: probe.Native}
	}
	for name, v := range verdicts {
		caps[name] = probe.Result{Verdict: v}
	}
	return probe.Report{Capabilities: caps, Recommendation: probe.Recommend(caps)}
}

// withRemedy is a report where every capability is native but name,
// partial with remedy (raced).
func withRemedy(name, remedy string) probe.Report {
	rep := reportWith(nil)
	rep.Capabilities[name] = probe.Result{Verdict: probe.Partial, Remedy: remedy}
	return rep
}

// What a re-probe switches: only what got worse than the backend is served
// with, and nothing on a capability it could not measure.
func TestWorseThanServed(t *testing.T) {
	native := leasedwrite.Mode{Kind: leasedwrite.Native}
	leasedAll := leasedwrite.Mode{Kind: leasedwrite.HoldBack, Checks: storeChecks(reportWith(nil).Capabilities)}
	reducedDelete := leasedwrite.Mode{Kind: leasedwrite.Native, Rules: leasedwrite.Rules{operation.DeleteObject: leasedwrite.RuleIfMatch}}
	entriesApart := leasedwrite.Mode{Kind: leasedwrite.Native, Rules: leasedwrite.Rules{operation.DeleteObjects: leasedwrite.RuleEntriesAsDeletes}}
	refusedDeletes := leasedwrite.Mode{Kind: leasedwrite.Native, Rules: leasedwrite.Rules{
		operation.DeleteObject: leasedwrite.RuleRefused, operation.DeleteObjects: leasedwrite.RuleRefused}}
	for _, c := range []struct {
		name              string
		served            leasedwrite.Mode
		configuredInPlace bool
		rep               probe.Report
		check             func(leasedwrite.Mode) bool // nil: no switch
	}{
		{"native, still native", native, false, reportWith(nil), nil},
		{"native, copy racy", native, false, reportWith(map[string]probe.Verdict{probe.CopyIfMatch: probe.Racy}),
			func(m leasedwrite.Mode) bool {
				return m.Kind == leasedwrite.HoldBack && m.Checks.IfMatch[operation.PutObject]
			}},
		{"native, copy racy, configured in place", native, true, reportWith(map[string]probe.Verdict{probe.CopyIfMatch: probe.Racy}),
			func(m leasedwrite.Mode) bool { return m.Kind == leasedwrite.LeaseFirst }},
		{"native, uploads now in place (nothing leased to move)", native, false, reportWith(map[string]probe.Verdict{probe.AtomicUploads: probe.InPlace}), nil},
		{"native, a capability unmeasured", native, false, reportWith(map[string]probe.Verdict{probe.PutIfMatch: probe.Error}), nil},
		{"reduced delete, remedy still raced", reducedDelete, false, withRemedy(probe.DeleteIfMatch, probe.RemedyIfMatch), nil},
		{"reduced delete, remedy lost its race", reducedDelete, false, reportWith(map[string]probe.Verdict{probe.DeleteIfMatch: probe.Partial}),
			func(m leasedwrite.Mode) bool { return m.Kind == leasedwrite.HoldBack && m.Rules == nil }},
		{"entries as deletes, entry ETags still ignored", entriesApart, false, reportWith(map[string]probe.Verdict{probe.DeleteObjectsETag: probe.Ignored}), nil},
		{"entries as deletes, DeleteObject now racy", entriesApart, false, reportWith(map[string]probe.Verdict{probe.DeleteObjectsETag: probe.Ignored, probe.DeleteIfMatch: probe.Racy}),
			func(m leasedwrite.Mode) bool { return m.Kind == leasedwrite.HoldBack }},
		{"deletes refused, DeleteObject racy and entry ETags ignored (nothing served relies on them)", refusedDeletes, false,
			reportWith(map[string]probe.Verdict{probe.DeleteIfMatch: probe.Racy, probe.DeleteObjectsETag: probe.Ignored}), nil},
		{"deletes refused, PutObject If-Match now racy", refusedDeletes, false, reportWith(map[string]probe.Verdict{probe.PutIfMatch: probe.Racy}),
			func(m leasedwrite.Mode) bool { return m.Kind == leasedwrite.HoldBack }},
		{"native entries, entry ETags now ignored", native, false, reportWith(map[string]probe.Verdict{probe.DeleteObjectsETag: probe.Ignored}),
			func(m leasedwrite.Mode) bool { return m.Kind == leasedwrite.HoldBack }},
		{"leased, a store check refused now", leasedAll, false, reportWith(map[string]probe.Verdict{probe.PutIfNoneMatch: probe.Refused}),
			func(m leasedwrite.Mode) bool {
				return !m.Checks.IfNoneMatch[operation.PutObject] && m.Checks.IfMatch[operation.PutObject]
			}},
		{"leased, a store check unmeasured", leasedAll, false, reportWith(map[string]probe.Verdict{probe.PutIfNoneMatch: probe.Error}), nil},
		{"leased, uploads now in place", leasedAll, false, reportWith(map[string]probe.Verdict{probe.AtomicUploads: probe.InPlace}),
			func(m leasedwrite.Mode) bool { return m.Kind == leasedwrite.LeaseFirst }},
	} {
		got, why, ok := worseThanServed(c.served, c.configuredInPlace, c.rep)
		switch {
		case c.check == nil && ok:
			t.Errorf("%s: switched (%s %s), want no switch", c.name, why.capability, why.verdict)
		case c.check != nil && !ok:
			t.Errorf("%s: no switch", c.name)
		case c.check != nil && !c.check(got):
			t.Errorf("%s: switched to %+v", c.name, got)
		}
	}
}

// A mode switch is thrown once and read by every request after it.
func TestModeSwitchThrowsOnce(t *testing.T) {
	s := newModeSwitch(leasedwrite.Mode{Kind: leasedwrite.Native})
	if s.Switched() || s.Mode().Kind != leasedwrite.Native {
		t.Fatal("a new switch is thrown")
	}
	if !s.switchTo(leasedwrite.Mode{Kind: leasedwrite.HoldBack}) || s.Mode().Kind != leasedwrite.HoldBack || !s.Switched() {
		t.Fatalf("after the switch: %v, switched %v", s.Mode().Kind, s.Switched())
	}
	if s.switchTo(leasedwrite.Mode{Kind: leasedwrite.LeaseFirst}) || s.Mode().Kind != leasedwrite.HoldBack {
		t.Fatal("a second switch took effect")
	}
}
