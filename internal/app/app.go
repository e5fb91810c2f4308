// Package app wires s3cond's parts from a Config: the backend (a real S3
// endpoint or the embedded development store), the re-signing transport,
// the lease store and committer, the client keyring and verifier, and the
// proxy handler. cmd/s3cond calls Build and serves the handler.
package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/access"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/embedded"
	"github.com/s3cond/s3cond/proxy"
	"github.com/s3cond/s3cond/sigv4"
)

// App is a wired s3cond: Handler serves the S3 API; Close releases what Build opened.
type App struct {
	Handler http.Handler
	// BackendEndpoint is where requests go (the embedded store's address in development).
	BackendEndpoint string
	closers         []func(context.Context) error
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
func Build(ctx context.Context, cfg *config.Config, log zerolog.Logger) (_ *App, err error) {
	a := &App{}
	defer func() {
		if err != nil {
			_ = a.Close(context.WithoutCancel(ctx))
		}
	}()

	backend, err := a.buildBackend(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	committer, err := a.buildLeases(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	keyring := access.NewKeyring(cfg.Keys)
	verifier := sigv4.NewVerifier(keyring, cfg.Server.Region)
	verifier.MaxSkew = cfg.Server.MaxSkew

	a.Handler = proxy.New(proxy.Options{
		Auth:               verifier,
		Access:             keyring,
		Backend:            backend,
		Leases:             committer,
		LeaseTimeout:       cfg.Lease.Timeout,
		SerializeAllWrites: cfg.Lease.SerializesAllWrites,
		Domain:             cfg.Server.Domain,
		Log:                log,
	})
	return a, nil
}

func (a *App) buildBackend(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*proxy.Backend, error) {
	endpoint := cfg.Backend.Endpoint
	creds := aws.CredentialsProvider(credentials.NewStaticCredentialsProvider("embedded", "embedded", ""))
	if cfg.Backend.Type == config.BackendEmbedded {
		store, err := embedded.Start(ctx, cfg.DataDir, log.With().Str("component", "embedded-store").Logger())
		if err != nil {
			return nil, fmt.Errorf("start the embedded S3 store in %s: %w", cfg.DataDir, err)
		}
		a.closers = append(a.closers, store.Close)
		endpoint = store.Endpoint()
	} else {
		c, err := credentialsProvider(ctx, cfg.Backend.Credentials, cfg.Backend.Region)
		if err != nil {
			return nil, fmt.Errorf("backend.credentials: %w", err)
		}
		creds = c
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("backend.endpoint: %w", err)
	}
	a.BackendEndpoint = endpoint
	return &proxy.Backend{
		Endpoint:          u,
		VirtualHosted:     cfg.Backend.Addressing == config.AddressingVirtual,
		Buckets:           cfg.Backend.Buckets,
		Client:            &http.Client{Transport: sigv4.NewResigner(backendTransport(), creds, cfg.Backend.Region), CheckRedirect: noRedirects},
		ForwardChecksums:  cfg.Backend.Checksums == config.ChecksumsForward,
		NativeConditional: cfg.Backend.Conditional == config.ConditionalNative,
	}, nil
}

// noRedirects hands a backend's redirect to the client as it is, as a proxy must.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// backendTransport is proxy.NewBackendTransport: see there why its
// connections reset when cut off.
func backendTransport() *http.Transport { return proxy.NewBackendTransport() }

func credentialsProvider(ctx context.Context, c config.Credentials, region string) (aws.CredentialsProvider, error) {
	switch c.Source {
	case config.CredentialsDefault:
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
		if err != nil {
			return nil, fmt.Errorf("load the AWS default credential chain: %w", err)
		}
		return awsCfg.Credentials, nil
	default: // static, and env (Load already read the variables)
		return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, ""), nil
	}
}

func (a *App) buildLeases(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*dynamolease.Committer, error) {
	var table dynamolease.Table
	switch cfg.Lease.Store {
	case config.LeaseStoreMemory:
		table = dynamolease.NewMemTable()
	case config.LeaseStoreDynamoDB:
		client, err := newDynamoClient(ctx, cfg)
		if err != nil {
			return nil, err
		}
		table = dynamolease.NewDynamoTable(client, cfg.Lease.DynamoDB.Table)
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("data_dir: %w", err)
		}
		bolt, err := dynamolease.OpenBolt(cfg.LeasePath())
		if err != nil {
			return nil, fmt.Errorf("lease.path: open the embedded lease store: %w", err)
		}
		stopSweeping := sweepPeriodically(bolt, cfg.Lease.TTL, log)
		a.closers = append(a.closers, func(context.Context) error { stopSweeping(); return bolt.Close() })
		table = bolt
	}
	host, _ := os.Hostname()
	return dynamolease.NewCommitter(table, dynamolease.Options{
		Timeout:          cfg.Lease.Timeout,
		MaxClockSkewRate: cfg.Lease.MaxClockSkewRate,
		PollInterval:     cfg.Lease.PollInterval,
		TTL:              cfg.Lease.TTL,
		WaitBudget:       cfg.Lease.WaitBudget,
		Owner:            host + ":" + strconv.Itoa(os.Getpid()),
	}, log.With().Str("component", "lease").Logger()), nil
}

// sweepPeriodically removes expired rows from the embedded lease store, the
// work DynamoDB's TTL does for a shared table; without it the file only grows.
func sweepPeriodically(bolt *dynamolease.BoltTable, ttl time.Duration, log zerolog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	interval := max(ttl/4, time.Minute)
	go func() {
		defer close(done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				n, err := bolt.Sweep(ctx, time.Now())
				if err != nil {
					log.Warn().Err(err).Msg("sweeping expired leases")
				} else if n > 0 {
					log.Debug().Int("removed", n).Msg("swept expired leases")
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
