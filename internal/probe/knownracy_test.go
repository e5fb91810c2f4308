package probe

import (
	"strings"
	"testing"
)

// allNative is a report of a store every race of which went well.
func allNative() Report {
	caps := map[string]Result{}
	for _, name := range AllCapabilities {
		caps[name] = Result{Verdict: Native, Detail: "raced"}
	}
	return Report{Capabilities: caps, Recommendation: RecommendNative}
}

// SeaweedFS and versitygw lose races too rarely for a start-up probe to
// see every time (race.go); the table holds their measured races racy
// whatever the probe's own races showed. The Server headers are what
// `weed server -s3` 4.53 and versitygw v1.8.0 send.
func TestKnownRacyStoresAreHeldBack(t *testing.T) {
	for _, tc := range []struct {
		server string
		racy   []string
	}{
		{"SeaweedFS 30GB 4.53", []string{CopyIfNoneMatch, CopyIfMatch, DeleteObjectsETag}},
		{"VERSITYGW", []string{DeleteIfMatch}},
		{"MinIO", nil},
		{"", nil},
	} {
		rep, held := HoldBackKnownRaces(allNative(), Identity{Server: tc.server, Version: serverVersion(tc.server)})
		if len(held) != len(tc.racy) {
			t.Errorf("%q: held back %v, want %v", tc.server, held, tc.racy)
		}
		want := map[string]Verdict{}
		for _, name := range WriteCapabilities {
			want[name] = Native
		}
		for _, name := range tc.racy {
			want[name] = Racy
			if r := rep.Capabilities[name]; r.Raced == "" || !strings.Contains(r.Detail, "known racy") {
				t.Errorf("%q: %s says not why it is held back: %+v", tc.server, name, r)
			}
		}
		wantVerdicts(t, rep, want)
		if wantRec := map[bool]string{true: RecommendNative, false: RecommendLease}[len(tc.racy) == 0]; rep.Recommendation != wantRec {
			t.Errorf("%q: recommendation %s, want %s", tc.server, rep.Recommendation, wantRec)
		}
	}
}

// A remedy that raced and won is no rule for a capability held back: it
// keeps its partial verdict (right one request at a time only in part)
// and loses the remedy.
func TestHoldBackDropsARemedy(t *testing.T) {
	rep := allNative()
	rep.Capabilities[DeleteIfMatch] = Result{Verdict: Partial, Remedy: RemedyIfMatch, Detail: "404 case wrong"}
	rep, held := HoldBackKnownRaces(rep, Identity{Server: "VERSITYGW"})
	if r := rep.Capabilities[DeleteIfMatch]; len(held) != 1 || r.Verdict != Partial || r.Remedy != "" || r.Raced == "" {
		t.Errorf("delete_if_match %+v, held %v; want partial without its remedy, raced", r, held)
	}
}

// A race lost once is never won back by a later probe: the kept report's
// racy capabilities hold a new report's native ones racy, and the new
// report carries why, so that it is kept in turn.
func TestRacedStaysRacy(t *testing.T) {
	earlier := allNative()
	earlier.Capabilities[CopyIfMatch] = Result{Verdict: Racy, Raced: "lost the race CopyObject If-Match vs PutObject If-Match: round 37"}
	rep, held := HoldBackRaced(allNative(), earlier)
	r := rep.Capabilities[CopyIfMatch]
	if len(held) != 1 || r.Verdict != Racy || !strings.Contains(r.Raced, "round 37") {
		t.Fatalf("copy_if_match %+v, held %v; want racy, for round 37", r, held)
	}
	if rep.Recommendation != RecommendLease {
		t.Errorf("recommendation %s, want lease", rep.Recommendation)
	}
	again, held := HoldBackRaced(allNative(), rep)
	if a := again.Capabilities[CopyIfMatch]; len(held) != 1 || a.Verdict != Racy || a.Raced != r.Raced {
		t.Errorf("a third probe: copy_if_match %+v; want still racy", again.Capabilities[CopyIfMatch])
	}
}
