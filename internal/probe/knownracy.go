package probe

import (
	"strings"
)

// knownRace is a store measured to lose races of some capabilities now and
// then (docs/stores.md, "Known-racy stores"). A probe at start-up races
// each capability for about RaceTime; a race a store loses 1 round in 40
// on a store whose contending writers wait a second each (SeaweedFS) is
// lost within the 2 or 3 rounds that fit with a probability of about 5%.
// What was measured once must not be unlearnt by a lucky start-up, so
// these capabilities are never native on such a store, however its races
// went.
type knownRace struct {
	// product is the Server header's first word, compared case-blind.
	product string
	// versions, when set, are the versions the race was measured on;
	// empty: every version (the store reports none, or no later version
	// has been measured atomic yet).
	versions     []string
	capabilities []string
	why          string
}

// knownRaces is the table of docs/stores.md, "Known-racy stores".
func knownRaces() []knownRace {
	return []knownRace{
		{
			// Server: "SeaweedFS 30GB 4.53". Every version: none after
			// 4.53 has been measured atomic.
			product:      "SeaweedFS",
			capabilities: []string{CopyIfNoneMatch, CopyIfMatch, DeleteObjectsETag},
			why: "SeaweedFS 4.53 (measured 2026-12): CopyObject's destination conditions race PutObject, " +
				"CompleteMultipartUpload and DeleteObject (1 round of 40, 3 of 160); a DeleteObjects entry's ETag " +
				"races a PutObject If-Match (2 of 30)",
		},
		{
			// Server: "VERSITYGW", no version: every versitygw.
			product:      "VERSITYGW",
			capabilities: []string{DeleteIfMatch},
			why: "versitygw v1.8.0 (measured 2026-12): DeleteObject If-Match checks and removes without the " +
				"publish lock PutObject holds, so it and a PutObject If-Match of one version both win " +
				"(11 rounds of 300 against one PutObject, 61 of 300 against three)",
		},
	}
}

// HeldBack is a capability the probe found native (or its remedy raced
// and won) that is served as racy all the same, and why.
type HeldBack struct {
	Capability string
	Why        string
}

// HoldBackKnownRaces turns every capability the known-racy table lists for
// id's store to racy (a partial one loses its remedy), whatever the races
// showed, and says which it held back.
func HoldBackKnownRaces(rep Report, id Identity) (Report, []HeldBack) {
	product, _, _ := strings.Cut(strings.TrimSpace(id.Server), " ")
	product, _, _ = strings.Cut(product, "/")
	var held []HeldBack
	for _, k := range knownRaces() {
		if !strings.EqualFold(product, k.product) || (len(k.versions) > 0 && !containsFold(k.versions, id.Version)) {
			continue
		}
		for _, name := range k.capabilities {
			var ok bool
			if rep, ok = holdBack(rep, name, "known racy (docs/stores.md): "+k.why, "known racy: "+k.why); ok {
				held = append(held, HeldBack{Capability: name, Why: k.why})
			}
		}
	}
	return rep, held
}

// HoldBackRaced keeps racy every capability an earlier report of the same
// store found racy (Result.Raced), so that no probe upgrades it by
// itself; an operator clears it by deleting the kept verdict
// (docs/operations.md).
func HoldBackRaced(rep, earlier Report) (Report, []HeldBack) {
	var held []HeldBack
	for _, name := range WriteCapabilities {
		why := earlier.Capabilities[name].Raced
		if why == "" {
			continue
		}
		var ok bool
		if rep, ok = holdBack(rep, name, "racy in an earlier probe: "+why, why); ok {
			held = append(held, HeldBack{Capability: name, Why: why})
		}
	}
	return rep, held
}

// holdBack marks rep's capability name raced (why, kept as it is so that
// it does not grow probe after probe; said says it in the evidence). A native verdict
// becomes racy (right one request at a time, which is what leased writes
// rely on when they send the store the condition); a partial one keeps
// its verdict and loses its remedy. ok says whether a rule could have
// relied on the capability before (native, or a remedy that raced and won).
func holdBack(rep Report, name, said, why string) (Report, bool) {
	r, present := rep.Capabilities[name]
	if !present {
		return rep, false
	}
	caps := make(map[string]Result, len(rep.Capabilities))
	for k, v := range rep.Capabilities {
		caps[k] = v
	}
	usable := r.Verdict == Native || (r.Verdict == Partial && r.Remedy != "")
	if r.Raced == "" {
		r.Raced = why
	}
	if usable {
		if r.Verdict == Native {
			r.Verdict = Racy
		}
		r.Remedy = ""
		r.Detail = said + "; held back, though this probe found: " + r.Detail
	}
	caps[name] = r
	rep.Capabilities = caps
	rep.Recommendation = Recommend(caps)
	return rep, usable
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
