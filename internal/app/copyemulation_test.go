package app

import (
	"testing"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// versityV180 is the probe's verdict on versitygw v1.8.0 for what an
// emulated copy meets: copy conditions ignored, Put and Complete native.
func versityV180(extra map[string]probe.Verdict) probe.Report {
	v := map[string]probe.Verdict{probe.CopyIfNoneMatch: probe.Ignored, probe.CopyIfMatch: probe.Ignored}
	for name, verdict := range extra {
		v[name] = verdict
	}
	return reportWith(v)
}

func TestNativeWithCopyEmulationExcusesOnlyTheCopy(t *testing.T) {
	emulating := config.Backend{Conditional: config.ConditionalNative, CopyEmulation: true}
	for _, c := range []struct {
		name    string
		b       config.Backend
		rep     probe.Report
		wanting string
	}{
		{"copy ignored, emulation on", emulating, versityV180(nil), ""},
		{"copy ignored, emulation off", config.Backend{Conditional: config.ConditionalNative}, versityV180(nil), probe.CopyIfNoneMatch},
		{"copy ignored, complete racy: nothing to build a large copy on", emulating,
			versityV180(map[string]probe.Verdict{probe.CompleteIfMatch: probe.Racy}), probe.CopyIfNoneMatch},
		{"copy ignored, delete ignored: a write still wants a lease", emulating,
			versityV180(map[string]probe.Verdict{probe.DeleteIfMatch: probe.Ignored}), probe.DeleteIfMatch},
		{"copy ignored, deletes partial and ignored, conditional deletes refused",
			config.Backend{Conditional: config.ConditionalNative, CopyEmulation: true, RefuseConditionalDeletes: true},
			versityV180(map[string]probe.Verdict{probe.DeleteIfMatch: probe.Partial, probe.DeleteObjectsETag: probe.Ignored}), ""},
	} {
		if got := firstWantingUnlessEmulated(c.b, c.rep.Capabilities); got != c.wanting {
			t.Errorf("%s: wanting %q, want %q", c.name, got, c.wanting)
		}
	}
}

// TestReprobeKeepsEmulatedCopyUntilItsBasisGoes: a backend served natively
// with an emulated copy is not switched for the copy's own verdict, and is
// switched to leases (emulation off) when PutObject's check goes.
func TestReprobeKeepsEmulatedCopyUntilItsBasisGoes(t *testing.T) {
	served := leasedwrite.Mode{Kind: leasedwrite.Native, EmulateCopy: true, Rules: leasedwrite.Rules{operation.CopyObject: leasedwrite.RuleEmulated}}
	if worse, _, ok := worseThanServed(served, false, versityV180(nil)); ok {
		t.Fatalf("switched to %+v for the copy's verdict, which the emulation covers", worse)
	}
	worse, why, ok := worseThanServed(served, false, versityV180(map[string]probe.Verdict{probe.PutIfMatch: probe.Racy}))
	if !ok || worse.Leases() == false || worse.EmulateCopy || why.capability != probe.PutIfMatch {
		t.Fatalf("Put If-Match racy: switched %v to %+v for %q; want leases, no emulation, for put_if_match", ok, worse, why.capability)
	}
}

// Under auto, copy_emulation makes the emulated copy CopyObject's
// lease-free rule where its basis is native, and never otherwise: without
// the setting, or with Complete racy, the copy has no rule and the whole
// backend leases.
func TestEmulatedCopyIsCopyObjectsLeaseFreeRule(t *testing.T) {
	for _, c := range []struct {
		name        string
		emulateCopy bool
		rep         probe.Report
		leaseFree   bool
	}{
		{"copy ignored, emulation on", true, versityV180(nil), true},
		{"copy ignored, emulation off", false, versityV180(nil), false},
		{"copy ignored, complete racy", true, versityV180(map[string]probe.Verdict{probe.CompleteIfMatch: probe.Racy}), false},
		{"copy native, emulation on: the store's own", true, reportWith(nil), true},
	} {
		rules, wanting, ok := leaseFreeRules(c.rep.Capabilities, planOptions{emulateCopy: c.emulateCopy})
		if ok != c.leaseFree {
			t.Errorf("%s: lease-free %v (wanting %q), want %v", c.name, ok, wanting, c.leaseFree)
			continue
		}
		if !ok {
			continue
		}
		want := leasedwrite.RuleEmulated
		if c.rep.Capabilities[probe.CopyIfMatch].Verdict == probe.Native {
			want = leasedwrite.RuleNative
		}
		if got := rules[operation.CopyObject]; got != want {
			t.Errorf("%s: CopyObject's rule %v, want %v", c.name, got, want)
		}
	}
}
