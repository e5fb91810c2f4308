package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
)

const verdictProbeBucket = "verdict-probe"

// probeCounter fronts a real store, counts the requests the conditional
// probe sends (its scratch prefix), and can rename the store's Server
// header, as an upgrade of the store would.
type probeCounter struct {
	probeRequests atomic.Int64
	server        atomic.Pointer[string]
	endpoint      string
}

func startProbeCounter(t *testing.T, target string) *probeCounter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &probeCounter{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if name := c.server.Load(); name != nil {
			resp.Header.Set("Server", *name)
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/s3cond-probe-") {
			c.probeRequests.Add(1)
		}
		rp.ServeHTTP(w, r) // Host stays s3cond's, which signed it
	}))
	t.Cleanup(srv.Close)
	c.endpoint = srv.URL
	return c
}

// versityConfig is conditional: auto on versitygw through counter, with
// only the conditional probe writing at start (no framing or header
// checks), its verdicts kept in dataDir.
func versityConfig(t *testing.T, gw *testservers.VersityGW, counter *probeCounter, dataDir string) *config.Config {
	t.Helper()
	cfg := devConfig(t)
	cfg.DataDir = dataDir
	cfg.Backend.Type = config.BackendS3
	cfg.Backend.Endpoint = counter.endpoint
	cfg.Backend.Credentials = config.Credentials{Source: config.CredentialsStatic, AccessKeyID: gw.AccessKey, SecretAccessKey: gw.Secret}
	cfg.Backend.Conditional = config.ConditionalAuto
	cfg.Backend.ProbeBucket = verdictProbeBucket
	cfg.Backend.SkipHeaderChecks = true
	cfg.Backend.ConditionalBodyFraming = config.BodyFramingNone
	return cfg
}

func createBucket(t *testing.T, gw *testservers.VersityGW, bucket string) {
	t.Helper()
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(gw.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(gw.AccessKey, gw.Secret, "")})
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
}

// buildAndClose builds an app and closes it, as a start and a stop of s3cond.
func buildAndClose(t *testing.T, cfg *config.Config) {
	t.Helper()
	a, err := Build(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if v := metricValue(t, a.Registry, "s3cond_backend_capability", map[string]string{
		"backend": "default", "capability": "put_if_none_match", "verdict": "native",
	}); v != 1 {
		t.Errorf("put_if_none_match on versitygw: not native (the kept verdict lost it?)")
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A restart against the same store reuses the verdict kept in data_dir and
// sends the store none of the probe's requests; a store that now names
// itself otherwise (an upgrade) is probed again, and so is one whose
// backend asks for it with reprobe_on_start.
func TestKeptVerdictSkipsTheProbeUntilTheStoreChanges(t *testing.T) {
	gw := testservers.StartVersityGW(t)
	createBucket(t, gw, verdictProbeBucket)
	counter := startProbeCounter(t, gw.Endpoint)
	dataDir := t.TempDir()

	buildAndClose(t, versityConfig(t, gw, counter, dataDir))
	first := counter.probeRequests.Load()
	if first == 0 {
		t.Fatal("the first start sent no probe requests")
	}
	if _, err := os.Stat(verdictPath(dataDir, "default")); err != nil {
		t.Fatalf("no verdict kept: %v", err)
	}

	buildAndClose(t, versityConfig(t, gw, counter, dataDir))
	if again := counter.probeRequests.Load() - first; again != 0 {
		t.Errorf("a restart against the same store sent %d probe requests, want 0", again)
	}

	upgraded := "VersityGW/9.9"
	counter.server.Store(&upgraded)
	buildAndClose(t, versityConfig(t, gw, counter, dataDir))
	afterUpgrade := counter.probeRequests.Load()
	if afterUpgrade == first {
		t.Error("a store with another Server header was not probed again")
	}
	kept, found, err := loadVerdict(verdictPath(dataDir, "default"))
	if err != nil || !found || kept.Store.Version != "9.9" {
		t.Errorf("the kept verdict after the upgrade: %+v (found %v, %v), want version 9.9", kept.Store, found, err)
	}

	forced := versityConfig(t, gw, counter, dataDir)
	forced.Backend.ReprobeOnStart = true
	buildAndClose(t, forced)
	if counter.probeRequests.Load() == afterUpgrade {
		t.Error("reprobe_on_start did not probe the store")
	}
}

// A kept verdict reads back as written; a file that does not decode, or is
// over the cap, is an error (the caller probes over it); a report with a
// capability the probe could not measure is not kept at all.
func TestVerdictFileRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	path := verdictPath(dir, "a/b")
	if !strings.HasPrefix(path, dir) || strings.Count(strings.TrimPrefix(path, dir), "/") != 2 {
		t.Fatalf("the backend name escapes its directory: %s", path)
	}
	v := storedVerdict{Backend: "a/b", Store: probe.Identity{Endpoint: "http://s", Server: "X/1"}, Report: reportWith(nil)}
	keepVerdict(path, v, zerolog.Nop())
	got, found, err := loadVerdict(path)
	if err != nil || !found || got.Store != v.Store || got.Report.Capabilities[probe.PutIfMatch].Verdict != probe.Native {
		t.Fatalf("read back %+v, %v, %v", got, found, err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadVerdict(path); err == nil {
		t.Error("a garbled verdict file decoded")
	}
	if err := os.WriteFile(path, make([]byte, maxVerdictFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadVerdict(path); err == nil {
		t.Error("an oversized verdict file was read")
	}
	unmeasured := storedVerdict{Backend: "c", Report: reportWith(map[string]probe.Verdict{probe.CopyIfMatch: probe.Error})}
	keepVerdict(verdictPath(dir, "c"), unmeasured, zerolog.Nop())
	if _, found, _ := loadVerdict(verdictPath(dir, "c")); found {
		t.Error("a report with an error verdict was kept")
	}
}
