package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/app"
	"github.com/s3cond/s3cond/internal/config"
)

// shutdownGrace is how long in-flight requests may run after SIGTERM.
const shutdownGrace = 30 * time.Second

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
		log.Warn().Str("variable", name).Msg("environment variable names no config key; ignored")
	}
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
	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// S3 allows 8 KiB of request headers in general, more with
		// metadata; this bound keeps a hostile header section out.
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       nil,
	}
	endpoint := "http://" + ln.Addr().String()
	log.Info().Str("endpoint", endpoint).Str("backend", a.BackendEndpoint).Str("lease_store", cfg.Lease.Store).Msg("s3cond serving")
	if usesDevKey(cfg) {
		printDevBanner(stdout, endpoint, cfg)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down: no new connections, waiting for requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
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

func newLogger(c config.Log, stderr io.Writer) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(c.Level)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("log.level: %w", err)
	}
	var w io.Writer = stderr
	if c.Format == config.LogFormatConsole {
		w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.RFC3339}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
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
	if cfg.Lease.Store != config.LeaseStoreDynamoDB {
		return fmt.Errorf("lease.store is %q: table create needs lease.store: dynamodb", cfg.Lease.Store)
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	if err := app.CreateTable(ctx, cfg, log); err != nil {
		return fmt.Errorf("create table %s: %w", cfg.Lease.DynamoDB.Table, err)
	}
	fmt.Fprintf(stdout, "lease table %s is ready\n", cfg.Lease.DynamoDB.Table)
	return nil
}

func checkConfig(args, env []string, stdout io.Writer) error {
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
	_, err = stdout.Write(out)
	return err
}
