package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/app"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/leasestore"
	"github.com/s3cond/s3cond/internal/tlsreload"
)

func loadConfig(f commonFlags, env []string) (*config.Config, error) {
	if f.listen != "" {
		env = append(env, "S3COND_SERVER_LISTEN="+f.listen)
	}
	return config.Load(f.config, env)
}

func serve(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	f, err := parseFlags("serve", args, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f, env)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	for _, name := range cfg.UnusedEnv(env) {
		if name == pprofEnv {
			continue
		}
		log.Warn().Str("variable", name).Msg("environment variable names no config key; ignored")
	}
	startProfiler(env, log)
	a, err := app.Build(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(closeCtx); err != nil {
			log.Warn().Err(err).Msg("closing")
		}
	}()

	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("server.listen: %w", err)
	}
	opts := app.ServeOptions{Listener: ln, ShutdownGrace: cfg.Server.ShutdownGrace, MaxConnections: cfg.Server.MaxConnections,
		MaxUnauthenticatedConnectionsPerSource: cfg.Server.MaxUnauthenticatedConnectionsPerAddress,
		Admin:                                  app.AdminBounds{MaxConnections: cfg.Admin.MaxConnections, IdleTimeout: cfg.Admin.IdleTimeout}, Log: log}
	// SIGHUP reloads the certificate. Caught even without TLS: its default
	// action would end the process, a surprise for whoever sent it to reload.
	hangups := make(chan os.Signal, 1)
	signal.Notify(hangups, syscall.SIGHUP)
	defer signal.Stop(hangups)
	scheme := "http"
	if cfg.Server.TLS.Enabled() {
		certs, err := tlsreload.New(cfg.Server.TLS.CertFile, cfg.Server.TLS.KeyFile, log.With().Str("component", "tls").Logger())
		if err != nil {
			ln.Close()
			return fmt.Errorf("server.tls: %w", err)
		}
		go certs.ReloadOn(ctx, hangups)
		opts.TLS, scheme = certs.TLSConfig(), "https"
	} else {
		go ignoreHangups(ctx, hangups, log)
	}
	if cfg.Admin.Listen != "" {
		adminLn, err := net.Listen("tcp", cfg.Admin.Listen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("admin.listen: %w", err)
		}
		opts.AdminListener = adminLn
		log.Info().Str("admin", "http://"+adminLn.Addr().String()).Msg("admin listener: /metrics, /healthz, /readyz, /leases")
	}

	endpoint := scheme + "://" + ln.Addr().String()
	backend := a.BackendEndpoint
	if a.Embedded != nil {
		backend = "embedded (in-process, no listener)"
	}
	log.Info().Str("endpoint", endpoint).Str("backend", backend).Str("lease_store", cfg.Lease.Store).Msg("s3cond serving")
	if usesDevKey(cfg) {
		printDevBanner(stdout, endpoint, cfg)
	}
	return a.Serve(ctx, opts)
}

func ignoreHangups(ctx context.Context, hangups <-chan os.Signal, log zerolog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hangups:
			log.Info().Msg("SIGHUP: no TLS certificate to reload (server.tls is not set)")
		}
	}
}

func usesDevKey(cfg *config.Config) bool {
	for _, k := range cfg.Keys {
		if k.AccessKeyID == config.DevAccessKeyID {
			return true
		}
	}
	return false
}

// printDevBanner tells a newcomer how to point a client here. The
// development key is public knowledge, so printing its secret is safe.
func printDevBanner(w io.Writer, endpoint string, cfg *config.Config) {
	fmt.Fprintf(w, `
  s3cond is running on DEVELOPMENT DEFAULTS (not for production)
    endpoint           %s
    access key id      %s
    secret access key  %s
    region             %s
    data               %s (embedded S3 store and lease store)

  aws configure set aws_access_key_id %s
  aws configure set aws_secret_access_key %s
  aws --endpoint-url %s s3 mb s3://demo

`, endpoint, config.DevAccessKeyID, config.DevSecret, cfg.Server.Region, cfg.DataDir,
		config.DevAccessKeyID, config.DevSecret, endpoint)
}

func tableCreate(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	f, err := parseFlags("table create", args, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f, env)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	store, err := leasestore.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	done, err := store.Create(ctx, log)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, done)
	return nil
}

func checkConfig(ctx context.Context, args, env []string, stdout io.Writer) error {
	f, err := parseFlags("check-config", args, os.Stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f, env)
	if err != nil {
		return err
	}
	out, err := config.Render(cfg.Masked())
	if err != nil {
		return err
	}
	if _, err := stdout.Write(out); err != nil {
		return err
	}
	return printStartupProbes(ctx, cfg, stdout)
}
