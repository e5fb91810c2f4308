package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/cmd/s3cond-bench/internal/bench"
)

// run executes the benchmark and writes its reports. It returns how many
// operations failed; err is for runs that could not be carried out.
func run(ctx context.Context, cfg config, stdout, progress io.Writer, log zerolog.Logger) (failed int64, err error) {
	maxWorkers := 1
	for _, p := range cfg.plan {
		maxWorkers = max(maxWorkers, p.Workers)
	}
	transport := bench.NewTransport(maxWorkers)
	defer transport.CloseIdleConnections()

	prefix := cfg.prefix
	if prefix == "" {
		prefix, err = runPrefix(time.Now())
		if err != nil {
			return 0, err
		}
	}
	endpoints := []bench.Endpoint{cfg.primary}
	rssPIDs := []int{cfg.rssPID}
	if cfg.compare != nil {
		endpoints = append(endpoints, *cfg.compare)
		rssPIDs = append(rssPIDs, cfg.cmpRSS)
	}
	targets := make([]*bench.Target, len(endpoints))
	// Last endpoint first: when it is the backend behind the first one, the
	// bucket then exists before the proxy is asked about it.
	for i := len(endpoints) - 1; i >= 0; i-- {
		ep := endpoints[i]
		client, err := bench.NewClient(ep, transport)
		if err != nil {
			return 0, err
		}
		if err := bench.EnsureBucket(ctx, client, cfg.bucket); err != nil {
			return 0, fmt.Errorf("%s: %w", ep.Label, err)
		}
		targets[i] = &bench.Target{
			Label: ep.Label, Client: client, Bucket: cfg.bucket,
			Prefix: prefix + ep.Label + "/", RSSPID: rssPIDs[i],
		}
	}

	runOpts := bench.RunOptions{Duration: cfg.duration, Ops: cfg.ops, Keep: cfg.keep, Log: log}
	if !cfg.quiet {
		runOpts.Progress = progress
	}
	settings := bench.Settings{Endpoint: cfg.primary.URL, Bucket: cfg.bucket, Duration: cfg.duration, Ops: cfg.ops}
	if cfg.compare != nil {
		settings.Compare = cfg.compare.URL
	}
	report, runErr := bench.RunSuite(ctx, bench.SuiteOptions{
		Plan: cfg.plan, Targets: targets, Rounds: cfg.rounds, Run: runOpts, Settings: settings,
	})
	// Whatever ran is reported, even when the run stopped early.
	if err := writeReports(cfg, report, stdout); err != nil {
		return 0, err
	}
	if runErr != nil {
		return 0, runErr
	}
	return report.TotalErrors(), nil
}

func writeReports(cfg config, report bench.Report, stdout io.Writer) error {
	if err := bench.WriteText(stdout, report); err != nil {
		return err
	}
	if cfg.jsonPath != "" {
		if err := report.WriteJSON(cfg.jsonPath); err != nil {
			return err
		}
	}
	if cfg.mdPath != "" {
		if err := os.WriteFile(cfg.mdPath, []byte(bench.Markdown(report)), 0o644); err != nil {
			return fmt.Errorf("write markdown %s: %w", cfg.mdPath, err)
		}
	}
	return nil
}

// runPrefix names this run's keys, so runs sharing a bucket never collide.
func runPrefix(now time.Time) (string, error) {
	random := make([]byte, 3)
	if _, err := rand.Read(random); err != nil {
		return "", fmt.Errorf("random run id: %w", err)
	}
	return fmt.Sprintf("s3cond-bench/%s-%s/", now.UTC().Format("20060102T150405"), hex.EncodeToString(random)), nil
}
