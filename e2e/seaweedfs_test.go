package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
)

// extraStoresOptIn is the environment variable that opts in to the
// testbed's stores that take many minutes to build (rclone's serve s3,
// SeaweedFS): scripts/probe-stores.sh builds them and sets it.
const extraStoresOptIn = "S3COND_PROBE_EXTRA_STORES"

// TestSeaweedFS: SeaweedFS 4.53 (`weed server -s3`) as s3cond's store, the
// same subtests as TestRGW's. weed takes about 14 minutes to build on a
// loaded 2-core machine, so this cell is opt-in (docs/testing.md): it runs
// with S3COND_PROBE_EXTRA_STORES=1, and then a missing weed fails it.
func TestSeaweedFS(t *testing.T) {
	if os.Getenv(extraStoresOptIn) != "1" {
		t.Skip("SeaweedFS is an opt-in store of the testbed, not run by default: " +
			"run scripts/probe-stores.sh (it builds weed and sets " + extraStoresOptIn + "=1)")
	}
	weed := testservers.StartSeaweedFS(t)
	t.Logf("SeaweedFS started in %s", weed.StartUp.Round(100*time.Millisecond))
	store := Store{Kind: BackendSeaweedFS, Endpoint: weed.Endpoint, Cred: Credentials{weed.AccessKey, weed.Secret}}
	testRealStore(t, store, seaweedFSVerdicts, probe.CopyIfNoneMatch)
}

// seaweedFSVerdicts are the probe's verdicts on SeaweedFS 4.53.
var seaweedFSVerdicts = map[string]probe.Verdict{
	probe.PutIfNoneMatch:      notMeasured,
	probe.PutIfMatch:          notMeasured,
	probe.CopyIfNoneMatch:     notMeasured,
	probe.CopyIfMatch:         notMeasured,
	probe.CompleteIfNoneMatch: notMeasured,
	probe.CompleteIfMatch:     notMeasured,
	probe.DeleteIfMatch:       notMeasured,
	probe.DeleteObjectsETag:   notMeasured,
	probe.ReadConditions:      notMeasured,
	probe.CopySourceCondition: notMeasured,
	probe.AtomicUploads:       notMeasured,
}
