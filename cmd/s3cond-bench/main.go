// Command s3cond-bench drives an S3 endpoint with concurrent workers and
// reports ops/s, MB/s and latency percentiles per workload. With --compare it
// runs the same workloads against a second endpoint (the backend directly)
// and prints the ratio of the two, which is s3cond's overhead.
//
// "s3cond-bench relay --listen ADDR --to ADDR" is a bare TCP relay instead:
// benchmarked in front of the backend, it gives the cost of the extra hop
// alone, which the overhead above includes.
//
// "s3cond-bench targets --suite S --anchor N --allocs A" checks a bench.sh
// run against the performance targets.
//
// "s3cond-bench hostile --address HOST:PORT --pid PID" opens a crowd of
// anonymous slow POST Object clients and reports the server's memory.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// exitOpsFailed is the exit status when the run finished but some operations
// failed: the numbers were written, but they describe a faulty run.
const (
	exitOpsFailed = 1
	exitUsage     = 2
)

func main() {
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: !isatty.IsTerminal(os.Stderr.Fd())}).With().Timestamp().Logger()
	if len(os.Args) > 1 && os.Args[1] == relaySubcommand {
		os.Exit(mainRelay(os.Args[2:], log))
	}
	if len(os.Args) > 1 && os.Args[1] == hostileSubcommand {
		os.Exit(mainHostile(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == targetsSubcommand {
		os.Exit(mainTargets(os.Args[2:], os.Stdout))
	}
	cfg, err := parseFlags(os.Args[1:], os.Getenv)
	if err != nil {
		if errors.Is(err, errHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "s3cond-bench:", err)
		os.Exit(exitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, cfg, os.Stdout, os.Stderr, log)
	if err != nil {
		log.Error().Err(err).Msg("benchmark failed")
		stop()
		os.Exit(exitUsage)
	}
	if failed > 0 {
		log.Error().Int64("failed_operations", failed).Msg("some operations failed; see the error lines")
		stop()
		os.Exit(exitOpsFailed)
	}
}

// mainRelay runs the relay subcommand and returns the exit status.
func mainRelay(args []string, log zerolog.Logger) int {
	cfg, err := parseRelayFlags(args)
	if err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "s3cond-bench:", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Info, not debug: a client resetting a connection is routine here.
	if err := runRelay(ctx, cfg, log.Level(zerolog.InfoLevel)); err != nil {
		log.Error().Err(err).Msg("relay failed")
		return exitUsage
	}
	return 0
}
