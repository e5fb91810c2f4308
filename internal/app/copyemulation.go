package app

import (
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
)

// An emulated copy (proxy/emulatedcopy.go) builds a conditional CopyObject
// from the store's conditional PutObject (small sources) or
// CompleteMultipartUpload (large ones) and takes no lease. It is served
// only where the backend takes no lease at all (CopyObject's
// leasedwrite.RuleEmulated in a lease-free plan, rules.go; or
// conditional: native unverified, with backend.copy_emulation): a leased
// write that relies on the lease alone would let an emulated copy commit
// between its check and its write.

// copyEmulationCapabilities are the probe capabilities an emulated copy
// relies on: the store's atomic check on the write it is built from.
var copyEmulationCapabilities = []string{probe.PutIfNoneMatch, probe.PutIfMatch,
	probe.CompleteIfNoneMatch, probe.CompleteIfMatch}

// copyEmulationRequirements are copyEmulationCapabilities as the
// requirements of CopyObject's emulated rule (rules.go).
func copyEmulationRequirements() []requirement {
	reqs := make([]requirement, len(copyEmulationCapabilities))
	for i, name := range copyEmulationCapabilities {
		reqs[i] = requirement{capability: name}
	}
	return reqs
}

// copyCapabilities are the ones it stands in for.
var copyCapabilities = map[string]bool{probe.CopyIfNoneMatch: true, probe.CopyIfMatch: true}

// copyEmulable reports whether the probe found every capability an
// emulated copy relies on native (checked atomically, raced).
func copyEmulable(caps map[string]probe.Result) bool {
	for _, name := range copyEmulationCapabilities {
		if caps[name].Verdict != probe.Native {
			return false
		}
	}
	return true
}

// firstWantingUnlessEmulated is probe.FirstWanting, with the copy's own
// capabilities excused where the backend asks for an emulated copy and
// the store is native for what it is built from, and the deletes' where
// the backend refuses conditional deletes (backend.refuse_conditional_deletes).
func firstWantingUnlessEmulated(b config.Backend, caps map[string]probe.Result) string {
	excused := map[string]bool{}
	if b.CopyEmulation && copyEmulable(caps) {
		for name := range copyCapabilities {
			excused[name] = true
		}
	}
	if b.RefuseConditionalDeletes {
		excused[probe.DeleteIfMatch], excused[probe.DeleteObjectsETag] = true, true
	}
	for _, name := range probe.WriteCapabilities {
		if caps[name].Verdict != probe.Native && !excused[name] {
			return name
		}
	}
	return ""
}
