package app

import (
	"github.com/s3cond/s3cond/internal/config"
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
	// Refused deletes (backend.refuse_conditional_deletes) rely on
	// nothing: their conditional form never reaches the store.
	{operation.DeleteObject, []candidateRule{
		{leasedwrite.RuleRefused, nil},
		{leasedwrite.RuleNative, []requirement{{probe.DeleteIfMatch, ""}}},
		{leasedwrite.RuleIfMatch, []requirement{{probe.DeleteIfMatch, probe.RemedyIfMatch}}},
	}},
	// Entries sent as DeleteObjects rely on DeleteObject's own rule, which
	// the plan holds whenever it holds this one.
	{operation.DeleteObjects, []candidateRule{
		{leasedwrite.RuleRefused, nil},
		{leasedwrite.RuleNative, []requirement{{probe.DeleteObjectsETag, ""}}},
		{leasedwrite.RuleEntriesAsDeletes, nil},
	}},
}

// leaseFreeRules are the rules under which every conditional operation is
// atomic without a lease, or ok false and the first operation that has
// none with the capability in its way (mixing leased and lease-free
// operations is unsafe: docs/spec.md, "Lease-free plans").
//
// opts.emulateCopy (backend.copy_emulation) admits the emulated
// CopyObject; opts.refuseDeletes (backend.refuse_conditional_deletes)
// refuses the conditional deletes, whatever the store could do.
func leaseFreeRules(caps map[string]probe.Result, opts planOptions) (rules leasedwrite.Rules, wanting string, ok bool) {
	rules = leasedwrite.Rules{}
	for _, o := range leaseFreeOperations {
		chosen := false
		for _, c := range o.candidates {
			if !opts.admits(c.rule) {
				continue
			}
			if unmet := firstUnmet(c.requires, caps); unmet == "" {
				rules[o.op], chosen = c.rule, true
				break
			}
		}
		if !chosen {
			return nil, firstUnmet(firstAdmitted(o.candidates, opts).requires, caps), false
		}
	}
	return rules, "", true
}

// planOptions are the backend's settings that admit or impose a rule.
type planOptions struct {
	emulateCopy   bool
	refuseDeletes bool
}

// backendPlanOptions reads them from the backend's configuration.
func backendPlanOptions(b config.Backend) planOptions {
	return planOptions{emulateCopy: b.CopyEmulation, refuseDeletes: b.RefuseConditionalDeletes}
}

// admits says whether a plan under these options may use rule: the
// emulated copy and refused deletes only where asked for. (Refused comes
// first among a delete's candidates and relies on nothing, so where it is
// admitted it is chosen.)
func (o planOptions) admits(rule leasedwrite.Rule) bool {
	switch rule {
	case leasedwrite.RuleEmulated:
		return o.emulateCopy
	case leasedwrite.RuleRefused:
		return o.refuseDeletes
	}
	return true
}

// firstAdmitted is the most preferred of candidates opts admits, whose
// first unmet requirement names what keeps the backend leasing.
func firstAdmitted(candidates []candidateRule, opts planOptions) candidateRule {
	for _, c := range candidates {
		if opts.admits(c.rule) {
			return c
		}
	}
	return candidateRule{}
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
