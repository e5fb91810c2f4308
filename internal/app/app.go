// Package app wires s3cond's parts from a Config: the backend (a real S3
// endpoint or the embedded development store), the re-signing transport,
// the lease store and committer, the client keyring and verifier, the
// proxy handler, and the metrics and readiness probes of the admin listener.
// cmd/s3cond calls Build, then Serve.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/access"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/awscreds"
	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/embedded"
	"github.com/s3cond/s3cond/internal/leasestore"
	"github.com/s3cond/s3cond/internal/metrics"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/proxy"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/sigv4"
)

// Readiness probe timings: a probe answers within probeTimeout or counts as
// down, and its result is reused for readinessCacheFor.
const (
	probeTimeout      = 2 * time.Second
	readinessCacheFor = 3 * time.Second
)

// App is a wired s3cond: Handler serves the S3 API, AdminHandler the
// operators' endpoints; Close releases what Build opened.
type App struct {
	Handler http.Handler
	// AdminHandler serves /metrics, /healthz and /readyz.
	AdminHandler http.Handler
	// Registry holds this process's metrics.
	Registry *prometheus.Registry
	// Readiness probes the lease store and the backend.
	Readiness *admin.Readiness
	// BackendEndpoint is where requests go: the backend's URL, or
	// embedded.Endpoint, a name reachable only inside this process.
	BackendEndpoint string
	// Embedded is the embedded development store, nil with a real backend.
	// It has no listener: Embedded.HTTPClient reaches it from this process.
	Embedded *embedded.Server
	// conditional exposes the start-up probes' verdicts (conditional.go).
	conditional *conditionalMetrics
	// leaseTable is the lease store as opened, for GET /leases and POST
	// /leases/release (leases.go).
	leaseTable dynamolease.Table
	// dataDir keeps the probe's verdicts (verdicts.go); downgrades counts
	// backends a re-probe switched to leasing, and onReprobe (tests) hears
	// of each re-probe's end (reprobe.go).
	dataDir    string
	downgrades *downgradeMetrics
	reprobe    reprobeSettings
	// connections counts what the listeners' caps close (adminserve.go,
	// serve.go).
	connections *metrics.Connections
	// probeCleanups are start-up probes' cleanups still deleting their
	// scratch keys (probestore.go); Close waits for them.
	probeCleanups sync.WaitGroup
	closers       []func(context.Context) error
}

// Close stops the embedded store and closes the lease store, in reverse order of opening.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i](ctx))
	}
	return errors.Join(errs...)
}

// Build wires s3cond from cfg.
func Build(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*App, error) {
	return buildWith(ctx, cfg, log, reprobeSettings{raceTime: reprobeRaceTime})
}

// buildWith is Build with the background re-probe's settings (tests
// shorten its races and hear of its ends).
func buildWith(ctx context.Context, cfg *config.Config, log zerolog.Logger, reprobe reprobeSettings) (_ *App, err error) {
	a := &App{Registry: prometheus.NewRegistry(), dataDir: cfg.DataDir, reprobe: reprobe}
	a.closers = append(a.closers, a.waitForProbeCleanups)
	defer func() {
		if err != nil {
			_ = a.Close(context.WithoutCancel(ctx))
		}
	}()
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(a.Registry)
	a.connections = metrics.NewConnections(a.Registry)

	backend, backendProbe, err := a.buildBackend(ctx, cfg, cfg.Backend, "backend", m, log)
	if err != nil {
		return nil, err
	}
	probes := []admin.Probe{{Name: "backend", Check: backendProbe}}
	bucketBackends := map[string]*proxy.Backend{}
	for i, named := range cfg.Backends {
		b, probe, err := a.buildBackend(ctx, cfg, named, fmt.Sprintf("backends[%d]", i), m, log)
		if err != nil {
			return nil, err
		}
		probes = append(probes, admin.Probe{Name: "backend_" + named.Name, Check: probe})
		for client := range named.Buckets {
			bucketBackends[client] = b
		}
	}
	committer, leaseProbe, err := a.buildLeases(ctx, cfg, m, log)
	if err != nil {
		return nil, err
	}
	a.Readiness = admin.NewReadiness(probeTimeout, readinessCacheFor,
		append([]admin.Probe{{Name: "lease_store", Check: leaseProbe}}, probes...)...)
	adminToken, err := a.createAdminToken(cfg, log)
	if err != nil {
		return nil, err
	}
	a.AdminHandler = withLeaseEndpoints(admin.Handler(a.Registry, a.Readiness), a.leaseTable, cfg.Lease,
		adminToken, releasesThroughAdmin(cfg), log.With().Str("component", "admin").Logger())
	keyring := access.NewKeyring(cfg.Keys, access.AnonymousRead(cfg.Anonymous.Buckets))
	verifier := newVerifier(cfg, keyring, log)

	prx := proxy.New(proxy.Options{
		Auth:               verifier,
		Access:             keyring,
		Backend:            backend,
		BucketBackends:     bucketBackends,
		Leases:             committer,
		LeaseTimeout:       cfg.Lease.Timeout,
		MinStoreThroughput: cfg.Lease.MinStoreMiBPerSecond * (1 << 20),
		SerializeAllWrites: cfg.Lease.SerializesAllWrites,
		Domain:             cfg.Server.Domain,
		Log:                log,
		Observer:           m,
		BodyIdleTimeout:    cfg.Server.BodyIdleTimeout,
		WriteIdleTimeout:   cfg.Server.ResponseWriteIdleTimeout,
		AnonymousRead:      keyring.AnonymousAllowed,
		PostFormTimeout:    cfg.Server.PostFormTimeout,
		MaxUnauthenticated: cfg.Server.MaxUnauthenticatedRequests,
		WritePolicy:        writePolicy(cfg, log),
		// Per-address and signed budgets (docs/security.md, "Bounds per
		// source and stage").
		MaxUnauthenticatedPerSource: cfg.Server.MaxUnauthenticatedRequestsPerAddress,
		MaxSignatureChecks:          cfg.Server.MaxSignatureChecks,
	})
	a.Handler = prx
	// Closers run last-added first: lease releases still running in the
	// background finish before the lease store closes.
	a.closers = append(a.closers, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, drainTimeout)
		defer cancel()
		return prx.WaitForReleases(ctx)
	})
	return a, nil
}

// newVerifier is the client signature verifier of cfg's server and auth
// sections, over keyring's keys.
func newVerifier(cfg *config.Config, keyring *access.Keyring, log zerolog.Logger) *sigv4.Verifier {
	verifier := sigv4.NewVerifier(keyring, cfg.Server.Region)
	verifier.MaxSkew = cfg.Server.MaxSkew
	if cfg.Auth.SignatureV2 {
		verifier.SignatureV2 = true
		domain := cfg.Server.Domain
		verifier.VirtualHostBucket = func(host string) string { return operation.VirtualHostBucket(host, domain) }
		log.Warn().Msg("auth.signature_v2 is on: SigV2 requests sign neither their body (unless Content-MD5 is sent) nor Host")
	}
	return verifier
}

// buildBackend builds one backend; key names it in errors ("backend",
// "backends[1]"). Only backend may be the embedded store.
func (a *App) buildBackend(ctx context.Context, cfg *config.Config, b config.Backend, key string, m *metrics.Metrics, log zerolog.Logger) (*proxy.Backend, func(context.Context) error, error) {
	endpoint := b.Endpoint
	creds := aws.CredentialsProvider(credentials.NewStaticCredentialsProvider("embedded", "embedded", ""))
	transport := backendTransport(b.Pool)
	if b.Type == config.BackendEmbedded {
		store, err := embedded.Start(ctx, cfg.DataDir, log.With().Str("component", "embedded-store").Logger())
		if err != nil {
			return nil, nil, fmt.Errorf("start the embedded S3 store in %s: %w", cfg.DataDir, err)
		}
		a.closers = append(a.closers, store.Close)
		a.Embedded = store
		endpoint = embedded.Endpoint
		// In-process connections only (the store checks no signatures), and
		// never through an HTTP proxy from the environment.
		transport.DialContext = store.DialContext
		transport.Proxy = nil
	} else {
		c, err := awscreds.Provider(ctx, b.Credentials, b.Region)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.credentials: %w", key, err)
		}
		creds = c
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("%s.endpoint: %w", key, err)
	}
	keyPolicy, err := proxy.ParseKeyPolicy(b.KeyPolicy)
	if err != nil {
		return nil, nil, fmt.Errorf("%s.key_policy: %w", key, err)
	}
	if key == "backend" {
		a.BackendEndpoint = endpoint
	}
	// The conditional probe and the other start-up store checks run side
	// by side within backend.startup_checks_timeout.
	var mode leasedwrite.Mode
	var wg sync.WaitGroup
	strict := servesStrictBucket(cfg.Lease, b, key == "backend")
	wg.Go(func() { mode, err = a.conditionalMode(ctx, b, key, strict, creds, log) })
	framed, keeps := storeCapabilities(ctx, b, creds, log, b.StartupChecksTimeout)
	wg.Wait()
	if err != nil {
		return nil, nil, err
	}
	// The probe shares the connection pool but not the metrics: health
	// checks are not client traffic.
	probeClient := &http.Client{Transport: sigv4.NewResigner(transport, creds, b.Region), CheckRedirect: noRedirects}
	modes := newModeSwitch(mode)
	served := &proxy.Backend{
		Name:          b.Name,
		Endpoint:      u,
		VirtualHosted: b.Addressing == config.AddressingVirtual,
		Buckets:       b.Buckets,
		Client: &http.Client{
			Transport:     sigv4.NewResigner(m.InstrumentTransport(backendhttp.NewSpliceTransport(transport)), creds, b.Region),
			CheckRedirect: noRedirects,
		},
		ForwardChecksums:   b.Checksums == config.ChecksumsForward,
		ForwardPayloadHash: b.PayloadHash == config.PayloadHashForward,
		// Read per request: the mode a request is served in is the one
		// current when it arrives (a re-probe may switch it: reprobe.go).
		Mode:         modes.Mode,
		FramedBodies: framed,
		// Used where the mode says EmulateCopy (copyemulation.go).
		CopyEmulation: proxy.CopyEmulation{SinglePutLimit: int64(b.CopyEmulationSinglePutLimit)},
		// The rules of a lease-free plan refuse them too (rules.go).
		RefuseConditionalDeletes: b.RefuseConditionalDeletes,
		StoreKeeps:               keeps,
		KeyPolicy:                keyPolicy,
		Identity:                 backendIdentity(ctx, creds, log),
	}
	a.startReprobe(b, creds, modes, log)
	return served, backendProbe(probeClient, u), nil
}

// backendProbe checks that the backend answers HTTP at all: any status
// below 500 will do, since a HEAD of the service root is refused by some
// stores and not granted to every credential, yet proves the store is up.
func backendProbe(client *http.Client, endpoint *url.URL) func(context.Context) error {
	return func(ctx context.Context) error {
		root := *endpoint
		root.Path, root.RawPath = "/", ""
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, root.String(), nil)
		if err != nil {
			return fmt.Errorf("build the backend probe: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("HEAD %s: %w", root.Redacted(), err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			return fmt.Errorf("HEAD %s: status %d", root.Redacted(), resp.StatusCode)
		}
		return nil
	}
}

// noRedirects hands a backend's redirect to the client as it is, as a proxy must.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// backendTransport is backendhttp.NewBackendTransport (see there why its
// connections reset when cut off) with backend.pool's settings.
func backendTransport(pool config.Pool) *http.Transport {
	t := backendhttp.NewBackendTransport()
	// With virtual-hosted addressing every bucket is its own host, so the
	// total bound leaves a few of them a full per-host pool.
	t.MaxIdleConns = 4 * pool.MaxIdleConnsPerHost
	t.MaxIdleConnsPerHost = pool.MaxIdleConnsPerHost
	t.IdleConnTimeout = pool.IdleConnTimeout
	t.ResponseHeaderTimeout = pool.ResponseHeaderTimeout
	t.DialContext = backendhttp.ResettingDialer(&net.Dialer{Timeout: pool.DialTimeout, KeepAlive: 30 * time.Second})
	return t
}

// backendIdentity names s3cond's principal as stores that name owners by
// access key (versitygw, the embedded store) write it, so clients see their
// own identity in its place (proxy/clientidentity.go). A key that cannot
// be read now (a default chain not ready yet) leaves answers unrewritten.
func backendIdentity(ctx context.Context, creds aws.CredentialsProvider, log zerolog.Logger) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := creds.Retrieve(ctx)
	if err != nil || v.AccessKeyID == "" {
		log.Warn().Err(err).Msg("the backend key ID is unknown: owner names in answers are not rewritten")
		return nil
	}
	if v.AccessKeyID == "embedded" {
		return []string{"s3cond", v.AccessKeyID} // the embedded store's owner name first
	}
	return []string{v.AccessKeyID}
}

// LeaseOptions is the lease protocol's settings from cfg: what sizes a
// lease and every wait for one (the `s3cond leases` commands' too).
func LeaseOptions(cfg *config.Config) dynamolease.Options {
	return dynamolease.Options{
		Timeout:          cfg.Lease.Timeout,
		MaxClockSkewRate: cfg.Lease.MaxClockSkewRate,
		PollInterval:     cfg.Lease.PollInterval,
		TTL:              cfg.Lease.TTL,
		WaitBudget:       cfg.Lease.WaitBudget,
		SizedLeaseCap:    cfg.Lease.MaxSizedTimeout,
	}
}

// buildLeases opens the lease store and returns the committer on it and the
// store's readiness probe.
func (a *App) buildLeases(ctx context.Context, cfg *config.Config, m *metrics.Metrics, log zerolog.Logger) (*dynamolease.Committer, func(context.Context) error, error) {
	opts := LeaseOptions(cfg)
	// host:pid for people reading the table; the committer adds the
	// random token that makes it this process's alone.
	opts.Owner, opts.Observer = dynamolease.DefaultOwner(), m
	store, err := leasestore.Open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	a.closers = append(a.closers, func(context.Context) error { return store.Close() })
	table, err := store.Table(opts, log)
	if err != nil {
		return nil, nil, err
	}
	a.leaseTable = table
	probe := func(ctx context.Context) error {
		if _, err := table.Get(ctx, leasestore.ProbeKey, "*"); err != nil {
			return fmt.Errorf("read a lease row: %w", err)
		}
		return nil
	}
	return dynamolease.NewCommitter(m.InstrumentTable(table), opts, log.With().Str("component", "lease").Logger()), probe, nil
}
