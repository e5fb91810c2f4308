package probe

import (
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// wantOnlyRacy checks that exactly the capabilities in racy are racy and
// every other write capability is native, and that the probe recommends
// native only when none is racy.
func wantOnlyRacy(t *testing.T, fault func(http.Handler) http.Handler, racy ...string) Report {
	t.Helper()
	rep := runProbe(t, startFake(t, fault))
	want := map[string]Verdict{}
	for _, name := range WriteCapabilities {
		want[name] = Native
	}
	for _, name := range racy {
		want[name] = Racy
	}
	wantVerdicts(t, rep, want)
	wantRecommendation := RecommendNative
	if len(racy) > 0 {
		wantRecommendation = RecommendLease
	}
	if rep.Recommendation != wantRecommendation {
		t.Errorf("recommendation %q, want %q", rep.Recommendation, wantRecommendation)
	}
	return rep
}

// The control: a store that checks every condition atomically with its
// write passes every race, so the races themselves call nothing racy.
func TestProbeFindsAtomicStoreNative(t *testing.T) {
	rep := wantOnlyRacy(t, testservers.NewAtomicStore)
	for _, against := range []string{"vs PutObject If-Match", "vs CompleteMultipartUpload If-Match", "vs DeleteObject If-Match", "vs DeleteObjects entry ETag", "vs itself"} {
		if !strings.Contains(rep.Capabilities[CopyIfMatch].Detail, "CopyObject If-Match "+against) {
			t.Errorf("copy_if_match's evidence names no race of CopyObject If-Match %s: %s", against, rep.Capabilities[CopyIfMatch].Detail)
		}
	}
}

// SeaweedFS 4.53: a DeleteObjects entry's ETag check is not atomic with a
// CAS PutObject on that ETag. Only delete_objects_etag is racy.
func TestProbeFindsRacyDeleteObjects(t *testing.T) {
	rep := wantOnlyRacy(t, testservers.NewRacyDeleteObjectsStore, DeleteObjectsETag)
	if d := rep.Capabilities[DeleteObjectsETag].Detail; !strings.Contains(d, "DeleteObjects entry ETag vs PutObject If-Match") {
		t.Errorf("delete_objects_etag's evidence does not name the race it lost: %s", d)
	}
}

// SeaweedFS 4.53: CopyObject's destination conditions are not atomic with
// a concurrent PutObject. Only the copy capabilities are racy.
func TestProbeFindsRacyCopy(t *testing.T) {
	wantOnlyRacy(t, testservers.NewRacyCopyStore, CopyIfNoneMatch, CopyIfMatch)
}
