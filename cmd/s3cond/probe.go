package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/s3cond/s3cond/internal/app"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
)

const probeUsage = `usage:
  s3cond probe --bucket B (--config FILE [--backend NAME] | --endpoint URL --access-key-id K --secret-access-key S [--region R] [--path-style])
               [--json] [--writers N] [--rounds R] [--race-time D] [--timeout D]`

type probeFlags struct {
	config, backend string
	opts            probe.Options
	json            bool
}

func parseProbeFlags(args []string, stderr io.Writer) (probeFlags, error) {
	var f probeFlags
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "config file whose backend to probe")
	fs.StringVar(&f.backend, "backend", config.DefaultBackendName, "with --config: the backend's name")
	fs.StringVar(&f.opts.Endpoint, "endpoint", "", "the store's URL (without --config)")
	fs.StringVar(&f.opts.AccessKeyID, "access-key-id", "", "the store's access key id (without --config)")
	fs.StringVar(&f.opts.SecretKey, "secret-access-key", "", "the store's secret access key (without --config)")
	fs.StringVar(&f.opts.Region, "region", "us-east-1", "the store's region (without --config)")
	pathStyle := fs.Bool("path-style", true, "path-style addressing (without --config)")
	fs.StringVar(&f.opts.Bucket, "bucket", "", "the bucket to probe in (required; only a scratch prefix is written)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of a table")
	fs.IntVar(&f.opts.Writers, "writers", probe.DefaultWriters, "racing writers per round")
	fs.IntVar(&f.opts.Rounds, "rounds", probe.DefaultRounds, "at most this many rounds per race")
	fs.DurationVar(&f.opts.RaceTime, "race-time", probe.DefaultRaceTime, "a race starts rounds for this long (at least one round)")
	fs.DurationVar(&f.opts.Timeout, "timeout", probe.DefaultTimeout, "bound on the whole probe (its cleanup then has half as long, at most 20s)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, usageError{probeUsage}
		}
		return f, usageError{err.Error() + "\n" + probeUsage}
	}
	f.opts.PathStyle = *pathStyle
	switch {
	case fs.NArg() > 0:
		return f, usageError{fmt.Sprintf("unexpected argument %q\n%s", fs.Arg(0), probeUsage)}
	case f.opts.Bucket == "" && f.config == "":
		return f, usageError{"--bucket is required\n" + probeUsage}
	case f.config == "" && f.opts.Endpoint == "":
		return f, usageError{"--config or --endpoint is required\n" + probeUsage}
	case f.opts.Writers < 2 || f.opts.Rounds < 1 || f.opts.Timeout <= 0 || f.opts.RaceTime <= 0:
		return f, usageError{"--writers must be at least 2, --rounds at least 1, --timeout and --race-time positive"}
	}
	return f, nil
}

// probeCommand runs the probe and prints its report; it fails only when it
// could not run, since the verdicts are the output, not the exit status.
func probeCommand(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	f, err := parseProbeFlags(args, stderr)
	if err != nil {
		return err
	}
	opts := f.opts
	if f.config != "" {
		cfg, err := config.Load(f.config, env)
		if err != nil {
			return err
		}
		b, err := app.ProbeOptions(ctx, cfg, f.backend)
		if err != nil {
			return err
		}
		if opts.Bucket != "" {
			b.Bucket = opts.Bucket
		}
		if b.Bucket == "" {
			return usageError{"--bucket is required (the backend has no probe_bucket)\n" + probeUsage}
		}
		b.Writers, b.Rounds, b.RaceTime, b.Timeout = opts.Writers, opts.Rounds, opts.RaceTime, opts.Timeout
		opts = b
	}
	started := time.Now()
	rep, err := runProbe(ctx, opts)
	if err != nil {
		return err
	}
	if f.json {
		return probe.WriteJSON(stdout, rep)
	}
	fmt.Fprintf(stdout, "probed %s bucket %s in %s\n\n", opts.Endpoint, opts.Bucket, time.Since(started).Round(time.Millisecond))
	return probe.WriteTable(stdout, rep)
}

// printStartupProbes probes, as serve will at start-up, every backend whose
// conditional setting asks for it, and prints the verdicts as YAML comments
// after the config check-config printed.
func printStartupProbes(ctx context.Context, cfg *config.Config, stdout io.Writer) error {
	for _, b := range append([]config.Backend{cfg.Backend}, cfg.Backends...) {
		if !b.Probes() {
			continue
		}
		opts, err := app.ProbeOptions(ctx, cfg, b.Name)
		if err != nil {
			return err
		}
		rep, err := runProbe(ctx, opts)
		if err != nil {
			return err
		}
		var table strings.Builder
		if err := probe.WriteTable(&table, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n# backend %s (conditional: %s), probed in bucket %s:\n", b.Name, b.Conditional, b.ProbeBucket)
		for _, line := range strings.Split(strings.TrimRight(table.String(), "\n"), "\n") {
			fmt.Fprintln(stdout, strings.TrimRight("# "+line, " "))
		}
	}
	return nil
}

// runProbe races the store as serve does at start-up, the known-racy
// table included: a capability measured racy on the store's product is
// racy here too, however this run's races went, so the command never
// promises "native" where serve would lease.
func runProbe(ctx context.Context, opts probe.Options) (probe.Report, error) {
	rep, err := probe.Run(ctx, opts)
	if err != nil {
		return rep, err
	}
	// A store that does not answer has no name to look up; its report
	// already says it could not be probed.
	if id, err := probe.StoreIdentity(ctx, opts); err == nil {
		rep, _ = probe.HoldBackKnownRaces(rep, id)
	}
	return rep, nil
}
