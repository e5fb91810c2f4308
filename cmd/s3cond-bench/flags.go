package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/s3cond/s3cond/cmd/s3cond-bench/internal/bench"
)

// errHelp means -h was asked for and the usage was printed.
var errHelp = errors.New("help requested")

// config is everything the flags decide.
type config struct {
	primary  bench.Endpoint
	compare  *bench.Endpoint // nil without --compare
	bucket   string
	prefix   string // empty: a fresh one per run
	plan     []bench.Planned
	duration time.Duration
	ops      int64
	rounds   int
	jsonPath string
	mdPath   string
	rssPID   int
	cmpRSS   int
	keep     bool
	quiet    bool
}

// rawFlags are the flag values that need resolving after parsing.
type rawFlags struct {
	cmpURL, cmpKey, cmpSecret, cmpLabel string
	workloads                           string
	workers                             int
}

func parseFlags(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("s3cond-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg config
	raw := defineFlags(fs, &cfg, getenv)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs)
			return config{}, errHelp
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	durationSet := false
	fs.Visit(func(f *flag.Flag) { durationSet = durationSet || f.Name == "duration" })
	return resolveFlags(cfg, raw, durationSet, getenv)
}

// defineFlags declares every flag, writing into cfg and the returned values.
func defineFlags(fs *flag.FlagSet, cfg *config, getenv func(string) string) *rawFlags {
	raw := &rawFlags{}
	defaultRegion := getenv("AWS_REGION")
	if defaultRegion == "" {
		defaultRegion = "us-east-1"
	}
	fs.StringVar(&cfg.primary.URL, "endpoint", "", "S3 endpoint URL to benchmark (s3cond), e.g. http://127.0.0.1:9000")
	// The environment is read after parsing, not as the flag default, so
	// that -h never prints a secret.
	fs.StringVar(&cfg.primary.AccessKey, "access-key", "", "access key (default $AWS_ACCESS_KEY_ID)")
	fs.StringVar(&cfg.primary.SecretKey, "secret-key", "", "secret key (default $AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&cfg.primary.Region, "region", defaultRegion, "region to sign for")
	fs.StringVar(&cfg.primary.Label, "label", "s3cond", "name of --endpoint in reports")
	fs.StringVar(&raw.cmpURL, "compare", "", "second endpoint (the backend directly) to run the same workloads against")
	fs.StringVar(&raw.cmpKey, "compare-access-key", "", "access key for --compare (default: --access-key)")
	fs.StringVar(&raw.cmpSecret, "compare-secret-key", "", "secret key for --compare (default: --secret-key)")
	fs.StringVar(&raw.cmpLabel, "compare-label", "direct", "name of --compare in reports")
	fs.StringVar(&cfg.bucket, "bucket", "s3cond-bench", "bucket to use (created if missing)")
	fs.StringVar(&cfg.prefix, "prefix", "", "key prefix for this run (default: s3cond-bench/<time>-<random>/)")
	fs.IntVar(&raw.workers, "workers", 8, "concurrent workers per workload (NAME:N in --workload overrides it)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long each workload runs on each endpoint")
	fs.Int64Var(&cfg.ops, "ops", 0, "stop each workload after this many successful operations (--duration then applies only if given)")
	fs.StringVar(&raw.workloads, "workload", "all", "comma-separated NAME[:WORKERS] list, or all: "+strings.Join(bench.WorkloadNames, ", ")+"; also put-SIZE, get-SIZE")
	fs.IntVar(&cfg.rounds, "rounds", 1, "repeat the whole plan this many times and merge the results")
	fs.StringVar(&cfg.jsonPath, "json", "", "write the results as JSON to this file")
	fs.StringVar(&cfg.mdPath, "markdown", "", "write the results as Markdown tables to this file")
	fs.IntVar(&cfg.rssPID, "rss-pid", 0, "process ID serving --endpoint: report its peak RSS and CPU time per workload (Linux)")
	fs.IntVar(&cfg.cmpRSS, "compare-rss-pid", 0, "process ID serving --compare: report its peak RSS and CPU time per workload")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the objects the workloads wrote")
	fs.BoolVar(&cfg.quiet, "quiet", false, "no progress lines on stderr")
	return raw
}

// resolveFlags checks the parsed flags and fills in defaults from the
// environment and from each other.
func resolveFlags(cfg config, raw *rawFlags, durationSet bool, getenv func(string) string) (config, error) {
	if cfg.primary.URL == "" {
		return config{}, errors.New("--endpoint is required")
	}
	if cfg.primary.AccessKey == "" {
		cfg.primary.AccessKey = getenv("AWS_ACCESS_KEY_ID")
	}
	if cfg.primary.SecretKey == "" {
		cfg.primary.SecretKey = getenv("AWS_SECRET_ACCESS_KEY")
	}
	if cfg.ops > 0 && !durationSet {
		cfg.duration = 0
	}
	if cfg.ops < 0 || cfg.duration < 0 || (cfg.ops == 0 && cfg.duration == 0) {
		return config{}, errors.New("give a positive --duration or --ops")
	}
	if raw.workers < 1 {
		return config{}, errors.New("--workers must be at least 1")
	}
	workloads := raw.workloads
	if workloads == "all" {
		workloads = strings.Join(bench.WorkloadNames, ",")
	}
	plan, err := bench.ParseWorkloads(workloads, raw.workers)
	if err != nil {
		return config{}, err
	}
	cfg.plan = plan
	if raw.cmpURL != "" {
		ep := bench.Endpoint{Label: raw.cmpLabel, URL: raw.cmpURL, AccessKey: raw.cmpKey, SecretKey: raw.cmpSecret,
			Region: cfg.primary.Region}
		if ep.AccessKey == "" {
			ep.AccessKey = cfg.primary.AccessKey
		}
		if ep.SecretKey == "" {
			ep.SecretKey = cfg.primary.SecretKey
		}
		if ep.Label == cfg.primary.Label {
			return config{}, errors.New("--label and --compare-label must differ")
		}
		cfg.compare = &ep
	}
	return cfg, nil
}

func printUsage(fs *flag.FlagSet) {
	fs.SetOutput(nil) // os.Stderr
	fmt.Fprintln(fs.Output(), "usage: s3cond-bench --endpoint URL [--compare URL2] [flags]")
	fmt.Fprintln(fs.Output(), "       s3cond-bench relay --listen HOST:PORT --to HOST:PORT   (bare TCP relay; relay -h for more)")
	fmt.Fprintln(fs.Output(), "       s3cond-bench hostile --address HOST:PORT --pid PID   (anonymous slow clients, server memory; hostile -h for more)")
	fmt.Fprintln(fs.Output(), "       s3cond-bench targets --suite S.json --anchor N.json --allocs A.txt   (check the performance targets)")
	fs.PrintDefaults()
}
