package app

import (
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// requirement is one capability a rule relies on: native, or partial with
// the remedy the rule applies (raced in that form: probe.Result.Remedy).
type requirement struct {
	capability string
	remedy     string
}

// met reports whether the probe's verdict gives the rule what it relies on.
func (q requirement) met(caps map[string]probe.Result) bool {
	r := caps[q.capability]
	return r.Verdict == probe.Native || (q.remedy != "" && r.Verdict == probe.Partial && r.Remedy == q.remedy)
}

// candidateRule is one way of serving an operation without a lease, and
// what it relies on.
type candidateRule struct {
	rule     leasedwrite.Rule
	requires []requirement
}

// leaseFreeOperations are the conditional operations s3cond serves, each
// with its lease-free rules in order of preference. A backend runs without
// leases only if every one of them has a rule the probe found met.
var leaseFreeOperations = []struct {
	op         operation.Operation
	candidates []candidateRule
}{
	{operation.PutObject, []candidateRule{
		{leasedwrite.RuleNative, []requirement{{probe.PutIfNoneMatch, ""}, {probe.PutIfMatch, ""}}},
		{leasedwrite.RuleUnquoted, []requirement{{probe.PutIfNoneMatch, ""}, {probe.PutIfMatch, probe.RemedyUnquoted}}},
	}},
	// An emulated CopyObject (a conditional PutObject or
	// CompleteMultipartUpload of the source: copyemulation.go) relies on
	// their capabilities; a candidate only where backend.copy_emulation
	// asks for it.
	{operation.CopyObject, []candidateRule{
		{leasedwrite.RuleNative, []requirement{{probe.CopyIfNoneMatch, ""}, {probe.CopyIfMatch, ""}}},
		{leasedwrite.RuleEmulated, copyEmulationRequirements()},
	}},
	{operation.CompleteMultipartUpload, []candidateRule{
		{leasedwrite.RuleNative, []requirement{{probe.CompleteIfNoneMatch, ""}, {probe.CompleteIfMatch, ""}}},
	}},
	{operation.DeleteObject, []candidateRule{
		{leasedwrite.RuleNative, []requirement{{probe.DeleteIfMatch, ""}}},
		{leasedwrite.RuleIfMatch, []requirement{{probe.DeleteIfMatch, probe.RemedyIfMatch}}},
	}},
	// Entries sent as DeleteObjects rely on DeleteObject's own rule, which
	// the plan holds whenever it holds this one.
	{operation.DeleteObjects, []candidateRule{
		{leasedwrite.RuleNative, []requirement{{probe.DeleteObjectsETag, ""}}},
		{leasedwrite.RuleEntriesAsDeletes, nil},
	}},
}

// leaseFreeRules are the rules under which every conditional operation is
// atomic without a lease, or ok false and the first operation that has
// none with the capability in its way (mixing leased and lease-free
// operations is unsafe: docs/spec.md, "Lease-free plans").
//
// emulateCopy (backend.copy_emulation) admits the emulated CopyObject.
func leaseFreeRules(caps map[string]probe.Result, emulateCopy bool) (rules leasedwrite.Rules, wanting string, ok bool) {
	rules = leasedwrite.Rules{}
	for _, o := range leaseFreeOperations {
		chosen := false
		for _, c := range o.candidates {
			if c.rule == leasedwrite.RuleEmulated && !emulateCopy {
				continue
			}
			if unmet := firstUnmet(c.requires, caps); unmet == "" {
				rules[o.op], chosen = c.rule, true
				break
			}
		}
		if !chosen {
			return nil, firstUnmet(o.candidates[0].requires, caps), false
		}
	}
	return rules, "", true
}

// firstUnmet names the first requirement caps do not meet, or "".
func firstUnmet(reqs []requirement, caps map[string]probe.Result) string {
	for _, q := range reqs {
		if !q.met(caps) {
			return q.capability
		}
	}
	return ""
}

// servedRequirements are what the rules of a lease-free mode rely on, for
// the re-probe to check (nil rules: every operation native).
func servedRequirements(rules leasedwrite.Rules) []requirement {
	var reqs []requirement
	for _, o := range leaseFreeOperations {
		for _, c := range o.candidates {
			if c.rule == rules[o.op] {
				reqs = append(reqs, c.requires...)
				break
			}
		}
	}
	return reqs
}
