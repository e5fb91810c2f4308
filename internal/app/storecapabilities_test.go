package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testservers"
)

// A store that accepts connections but never answers (stands for a hung
// or partitioned S3 endpoint): all of a backend's start-up store checks
// end together within their budget, cleanup included, and each counts as
// failed: framing off, every §7 header answered 501, and a warning says
// the budget ran out. Before any listener opens, an unbounded wait here
// kept the admin port closed past a liveness probe's patience.
func TestStoreChecksOfAHungStoreEndWithinTheirBudget(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	b := config.Default().Backend
	b.Type, b.Endpoint, b.ConditionalBodyFraming = config.BackendS3, hung.URL, config.BodyFramingAuto
	var logs bytes.Buffer
	log := zerolog.New(zerolog.SyncWriter(&logs)) // the checks log concurrently
	const budget = 1500 * time.Millisecond
	done := make(chan struct{})
	var framed bool
	var keeps map[string]bool
	start := time.Now()
	go func() {
		defer close(done)
		framed, keeps = storeCapabilities(context.Background(), b, credentials.NewStaticCredentialsProvider("k", "s", ""), log, budget)
	}()
	select {
	case <-done:
	case <-time.After(4 * budget): // the budget plus scheduling slack on a shared machine
		t.Fatalf("the start-up store checks still ran %v after a %v budget", time.Since(start), budget)
	}
	if framed {
		t.Error("framing chosen for a store whose check never answered")
	}
	if len(keeps) != 3 {
		t.Fatalf("verdicts for %d §7 capabilities, want 3: %v", len(keeps), keeps)
	}
	for name, forwarded := range keeps {
		if forwarded {
			t.Errorf("%s forwarded to a store whose check never answered", name)
		}
	}
	if n := strings.Count(logs.String(), `"ran_out_of_startup_budget":true`); n != 4 {
		t.Errorf("%d warnings say the start-up budget ran out, want 4 (framing and three §7 capabilities):\n%s", n, logs.String())
	}
}

// refusesCreateBucket stands for a store reached with a key scoped to some
// buckets: CreateBucket is denied, the rest reaches gofakes3.
func refusesCreateBucket(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// A key that may not create buckets cannot run the checks in a scratch
// bucket: the warnings name probe_bucket as the remedy, and with it set
// the framing and multipart checks run there.
func TestStoreChecksNameProbeBucketWhenCreateBucketIsDenied(t *testing.T) {
	b := config.Default().Backend
	b.Type, b.Endpoint = config.BackendS3, testservers.StartFaultyStore(t, refusesCreateBucket)
	creds := credentials.NewStaticCredentialsProvider("k", "s", "")
	var logs bytes.Buffer
	storeCapabilities(context.Background(), b, creds, zerolog.New(zerolog.SyncWriter(&logs)), 10*time.Second)
	for _, check := range []string{`"capability":"mpu_object_size"`, `"capability":"abort_if_match_initiated_time"`, `"conditional_body_framing":"auto"`} {
		if !logLineWith(logs.String(), check, "set probe_bucket") {
			t.Errorf("no warning for %s names probe_bucket:\n%s", check, logs.String())
		}
	}
	logs.Reset()
	b.ProbeBucket = testservers.FaultyStoreBucket
	storeCapabilities(context.Background(), b, creds, zerolog.New(zerolog.SyncWriter(&logs)), 10*time.Second)
	if strings.Count(logs.String(), "creating the scratch bucket") != 0 {
		t.Errorf("with probe_bucket set the framing or multipart check still made a scratch bucket:\n%s", logs.String())
	}
}

func logLineWith(logs string, parts ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// With skip_header_checks and an explicit framing setting, a start sends
// the store nothing, and the §7 headers are answered 501.
func TestSkipHeaderChecksWritesNothing(t *testing.T) {
	var requests atomic.Int64
	b := config.Default().Backend
	b.Type, b.ConditionalBodyFraming, b.SkipHeaderChecks = config.BackendS3, config.BodyFramingAWSChunked, true
	b.Endpoint = testservers.StartFaultyStore(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			inner.ServeHTTP(w, r)
		})
	})
	framed, keeps := storeCapabilities(context.Background(), b, credentials.NewStaticCredentialsProvider("k", "s", ""), zerolog.Nop(), 10*time.Second)
	if !framed {
		t.Error("aws-chunked configured, yet bodies are not framed")
	}
	for name, forwarded := range keeps {
		if forwarded {
			t.Errorf("%s forwarded with its check skipped", name)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the store received %d requests at start-up, want none", n)
	}
}

// The conditional probe of auto falls under the same start-up bound as the
// other checks, beside them: on a store that never answers, Build ends
// within backend.startup_checks_timeout (it took the probe's own 60 s
// before) and serves the backend with leases.
func TestAutoOnAHungStoreEndsWithinTheStartupBound(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	cfg := faultyBackendConfig(t, hung.URL, config.ConditionalAuto)
	cfg.Backend.StartupChecksTimeout = 1500 * time.Millisecond
	built := make(chan *App, 1)
	start := time.Now()
	go func() {
		a, err := Build(context.Background(), cfg, zerolog.Nop())
		if err != nil {
			t.Errorf("Build: %v", err)
		}
		built <- a
	}()
	var a *App
	select {
	case a = <-built:
	case <-time.After(4 * cfg.Backend.StartupChecksTimeout): // scheduling slack on a shared machine
		t.Fatalf("Build still ran %v after a %v start-up bound", time.Since(start), cfg.Backend.StartupChecksTimeout)
	}
	if a == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{"backend": "default", "mode": "lease"}); v != 1 {
		t.Error("a store whose probe never answered is not served with leases")
	}
}
