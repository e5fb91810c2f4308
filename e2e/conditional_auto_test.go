package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// autoConfig is an s3cond config in front of a store with the given
// backend.conditional, probing in bucket.
func autoConfig(endpoint string, cred Credentials, conditional, bucket string) string {
	return fmt.Sprintf(`backend:
  type: s3
  endpoint: %s
  credentials:
    source: static
    access_key_id: %s
    secret_access_key: %s
  conditional: %s
  probe_bucket: %s
keys:
  - access_key_id: client
    secret: client-secret
    buckets: ["*"]
    access: read-write
`, endpoint, cred.AccessKey, cred.Secret, conditional, bucket)
}

// requireLogged checks that the process logged every want (the start-up probe
// logs before the listener opens; the pipe may still be carrying it when
// StartS3cond returns).
func requireLogged(t *testing.T, s *testservers.S3cond, want ...string) {
	t.Helper()
	for _, w := range want {
		s.Process.WaitForOutput(t, 10*time.Second, w)
	}
}

var faultyCred = Credentials{"faultykey", "faultysecret"}

// TestAutoPicksLeaseForRacyStore: a store that checks with a HEAD and then
// writes is right one request at a time; the probe's race finds it out.
func TestAutoPicksLeaseForRacyStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewHeadThenPutStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
	requireLogged(t, s, "conditional writes: lease", "not_native=put_if_none_match", "verdict=racy")
}

// TestAutoSendsEntriesApartOnRacyDeleteObjectsStore: a store whose
// DeleteObjects entries race a CAS PutObject (SeaweedFS 4.53) and whose
// every other conditional write is atomic; the probe's race of the two
// finds it, and auto serves without leases by never sending a conditional
// entry in a DeleteObjects: each is a DeleteObject If-Match, which is
// atomic and raced.
func TestAutoSendsEntriesApartOnRacyDeleteObjectsStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewRacyDeleteObjectsStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
	requireLogged(t, s, "capability=delete_objects_etag", "verdict=racy", "conditional writes: native", "DeleteObjects: entries as DeleteObject")
}

// TestAutoReducesOnQuirkyStore: a store whose DeleteObject ignores its size
// and time conditions and whose DeleteObjects ignores entry ETags (SeaweedFS
// 4.53's and versitygw v1.8.0's quirks), DeleteObject If-Match atomic: auto
// serves it without leases, both reduced to DeleteObject If-Match.
func TestAutoReducesOnQuirkyStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewQuirkyStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
	requireLogged(t, s, "remedy=reduce_to_if_match", "conditional writes: native", "DeleteObject: reduced to If-Match", "DeleteObjects: entries as DeleteObject")
}

// TestAutoUnquotesOnUnquotedIfMatchStore: a store whose PutObject If-Match
// matches only an unquoted ETag (Ceph RGW 16.2.15), every other condition
// atomic: auto serves it without leases, sending the ETag unquoted.
func TestAutoUnquotesOnUnquotedIfMatchStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewUnquotedIfMatchStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
	requireLogged(t, s, "remedy=unquoted_etag", "conditional writes: native", "PutObject: If-Match unquoted")
}

// TestAutoPicksLeaseWhereAReductionRaces: the controls: where the one check
// a reduction relies on (DeleteObject If-Match) races a CAS PutObject,
// auto leases everything.
func TestAutoPicksLeaseWhereAReductionRaces(t *testing.T) {
	for name, fault := range map[string]func(http.Handler) http.Handler{
		"size and time ignored": testservers.NewRacyDeleteSizeTimeIgnoringStore,
		"entry ETags ignored":   testservers.NewRacyDeleteEntryETagIgnoringStore,
	} {
		t.Run(name, func(t *testing.T) {
			endpoint := testservers.StartFaultyStore(t, fault)
			s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
			requireLogged(t, s, "conditional writes: lease", "not_atomic=delete_if_match")
		})
	}
}

// TestAutoPicksLeaseForRacyCopyStore: a store whose CopyObject races
// PutObject (SeaweedFS 4.53), every other conditional write atomic.
func TestAutoPicksLeaseForRacyCopyStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewRacyCopyStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
	requireLogged(t, s, "conditional writes: lease", "not_native=copy_if_none_match", "verdict=racy")
}

// TestAutoPicksLeaseForPartialStore: conditions on PutObject, none on DeleteObject.
func TestAutoPicksLeaseForPartialStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewPutOnlyStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, "auto", testservers.FaultyStoreBucket))
	requireLogged(t, s, "conditional writes: lease", "capability=delete_if_match", "verdict=ignored")
}

// TestAutoOnVersityGW: versitygw v1.8.0 races right on PutObject and
// CompleteMultipartUpload but ignores conditions on CopyObject, and native
// mode would forward a conditional CopyObject unguarded: auto picks lease.
// Its DeleteObjects entry ETags (ignored) would be sent as DeleteObject
// If-Match, but its DeleteObject answers a second deleter of one version
// 204 where S3 answers 404 (delete_if_match partial with no remedy): that
// keeps it leasing too, until both are served otherwise.
func TestAutoOnVersityGW(t *testing.T) {
	v := testservers.StartVersityGW(t)
	cred := Credentials{v.AccessKey, v.Secret}
	CreateBucket(t, NewS3Client(v.Endpoint, cred, nil), probeBucket)
	s := testservers.StartS3cond(t, autoConfig(v.Endpoint, cred, "auto", probeBucket))
	requireLogged(t, s, "conditional writes: lease", "not_native=copy_if_none_match")
	resp, err := http.Get(s.Endpoint + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestNativeRefusesRacyStore: an explicit native on a store whose
// conditions race refuses to start, in one line naming the capability.
func TestNativeRefusesRacyStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewHeadThenPutStore)
	dir := t.TempDir()
	path := filepath.Join(dir, "s3cond.yaml")
	if err := os.WriteFile(path, []byte(autoConfig(endpoint, faultyCred, "native", testservers.FaultyStoreBucket)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testservers.BuildS3cond(t), "serve", "--config", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "S3COND_SERVER_LISTEN="+testservers.FreeAddr(t), "S3COND_ADMIN_LISTEN=127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("s3cond with conditional: native on a racy store: %v, want it to refuse to start\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "s3cond: backend.conditional: native, but the store's put_if_none_match is racy") {
		t.Errorf("last line %q, want the refusal naming put_if_none_match", last)
	}
}
