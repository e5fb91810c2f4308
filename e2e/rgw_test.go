package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

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
	// Of the conditions leased writes could also send, RGW checks only
	// PutObject If-None-Match right (its If-Match wants the ETag unquoted).
	testRealStore(t, store, rgwVerdicts, []string{probe.PutIfMatch}, storeCheckWant{must: []string{"PutObject If-None-Match"}})
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

// testRGWDirect: the controls. The same operations straight on RGW, with
// its own key, come out wrong where the races through s3cond came out
// right, so the races measured something.
func testRGWDirect(t *testing.T, store Store) {
	direct := NewS3Client(store.Endpoint, store.Cred, nil)
	CreateBucket(t, direct, "direct")
	ctx := t.Context()
	t.Run("cas_quoted_etag", func(t *testing.T) {
		// Every SDK quotes the ETag it sends back: RGW refuses the CAS
		// though the object is unchanged, so no CAS client makes progress.
		putBytes(t, ctx, direct, "direct", "cas", []byte("v1"))
		_, err := direct.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("direct"), Key: aws.String("cas"),
			Body: bytes.NewReader([]byte("v2")), IfMatch: aws.String(etagOf("v1"))})
		if s := HTTPStatus(err); s != 412 {
			t.Fatalf("CAS with the current quoted ETag straight on RGW: %v (status %d), the control expects its 412", err, s)
		}
	})
	t.Run("delete_after_put", func(t *testing.T) {
		// The outcome the delete_versus_put race must never have: a PUT
		// and a DELETE both conditioned on v1's ETag both succeed (the
		// PUT's ETag unquoted, as RGW wants it; the DELETE's ignored).
		putBytes(t, ctx, direct, "direct", "contested", []byte("v1"))
		unquoted := strings.Trim(etagOf("v1"), `"`)
		if _, err := direct.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("direct"), Key: aws.String("contested"),
			Body: bytes.NewReader([]byte("v2")), IfMatch: aws.String(unquoted)}); err != nil {
			t.Fatalf("CAS with the unquoted ETag straight on RGW: %v", err)
		}
		_, err := direct.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("direct"), Key: aws.String("contested"),
			IfMatch: aws.String(etagOf("v1"))})
		if err != nil {
			t.Fatalf("DELETE If-Match of the replaced version straight on RGW: %v; the control expects RGW to delete v2 regardless", err)
		}
		requireMissing(t, ctx, direct, "direct", "contested")
	})
	t.Run("copy_create", func(t *testing.T) {
		rounds := raceCopyCreates(t, []*s3.Client{direct}, direct, "direct", 3, 8)
		most := 0
		for _, r := range rounds {
			most = max(most, len(r.winners))
		}
		t.Logf("most copies told they created the destination in one round, straight on RGW: %d", most)
		if most <= 1 {
			t.Fatal("no round had two winners straight on RGW: the control measured nothing")
		}
	})
}
