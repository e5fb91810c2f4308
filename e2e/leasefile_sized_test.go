package e2e

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"go.yaml.in/yaml/v3"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// Random bytes over every page after the meta pages, each page's header
// kept, in a lease file its state file records (a clean stop): start-up
// read the file's id through bbolt before any integrity check and died of
// SIGSEGV (issue 33 finding 6). It must refuse with a clear error.
func TestLeaseFileOfRandomPagesIsRefusedClearly(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leasefile")
	dataDir := filepath.Join(t.TempDir(), "data")
	p := embeddedLeaseProxy(t, e, dataDir)
	for i := range 200 { // rows enough for branch pages
		resp := Do(t, p.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/leasefile/k" + strings.Repeat("x", i%40) + string(rune('a'+i%26)),
			Header: http.Header{"If-None-Match": {"*"}}, Body: []byte("v")})
		if resp.Status != http.StatusOK && resp.Status != http.StatusPreconditionFailed {
			t.Fatalf("conditional PUT %d: %d %s", i, resp.Status, resp.shortBody())
		}
	}
	p.Process.Stop()
	file := filepath.Join(dataDir, "leases.db")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	random := rand.New(rand.NewPCG(33, 6))
	page := os.Getpagesize()
	for start := 2 * page; start+page <= len(raw); start += page {
		for i := start + 16; i < start+page; i++ {
			raw[i] = byte(random.Uint32())
		}
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	runS3condExpectingRefusal(t, e, dataDir, "the lease file is corrupt")
}

// dataDirOf reads the data_dir of a started s3cond from its config file.
func dataDirOf(t *testing.T, p *testservers.S3cond) string {
	t.Helper()
	raw, err := os.ReadFile(p.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		DataDir string `yaml:"data_dir"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil || cfg.DataDir == "" {
		t.Fatalf("data_dir of %s: %q, %v", p.ConfigPath, cfg.DataDir, err)
	}
	return cfg.DataDir
}

// The holder of a conditional CopyObject (a sized lease, 20 s at 32 MiB/s)
// is SIGKILLed while the store copies, and the machine "restarts" (the state
// file says the lease file was in use on another boot): the restarted s3cond
// discards the file, and with it the copy's lease. Its pause must cover the
// longest lease that may have been in it, max(timeout, max_sized_timeout) ×
// skew, not timeout × skew (1 s here): after that, a create would be
// acknowledged and then overwritten by the copy (issue 33 finding 3: a
// create acknowledged at 2.1 s, overwritten by a dead holder's 2 GiB copy).
// The contender retries through the pause (503) and must end with 412, its
// state read finding the copy landed. With the old pause it was acknowledged
// and then overwritten by the copy.
func TestKilledCopyHolderAcrossAMachineRestartKeepsTheKey(t *testing.T) {
	var tap *StoreTap
	e := NewEnv(t, sizedLeaseConfig(&tap, t, sizedCopy), WithProcessEnv(sizedLeaseEnv, "S3COND_LEASE_MAX_SIZED_TIMEOUT=21s"))
	e.RequireProxy(t)
	holder := e.Proxies[0]
	answer := workAtStore(t, e, holder, tap, sizedCopy)
	holder.Process.Kill()
	if status := <-answer; status != 0 {
		t.Fatalf("the killed holder answered %d", status)
	}
	stateFile := filepath.Join(dataDirOf(t, holder), "leases.db.state")
	if err := os.WriteFile(stateFile, []byte(`{"synced":false,"boot_id":"a-boot-before-this-one"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	holder.Restart(t)
	client := e.Client(t, e.RW)
	start := time.Now()
	acknowledged := false
	// The contender retries through the pause as a client does, until it
	// is answered 200 or 412: the event the test waits for.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := testkit.Poll(ctx, func(ctx context.Context) error {
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sized"), Key: aws.String("dst"),
			Body: bytes.NewReader([]byte("contender")), IfNoneMatch: aws.String("*")}, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
		switch status := HTTPStatus(err); {
		case err == nil || status == http.StatusPreconditionFailed:
			acknowledged = err == nil
			t.Logf("the contender's create after the restart: %v after %s", status, time.Since(start))
			return nil
		case status == http.StatusServiceUnavailable || status == http.StatusConflict:
			return err
		default:
			t.Fatalf("the contender's create after %s: %v; want 503 while the lost leases may live, then 412", time.Since(start), err)
			return nil
		}
	}); err != nil {
		t.Fatalf("the contender's create was never answered 200 or 412 within 2 minutes: %v", err)
	}
	requireWorkIsFinal(t, e, tap, sizedCopy, acknowledged, start)
}
