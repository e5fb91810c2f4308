package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/s3cond/s3cond/cmd/s3cond-bench/internal/bench"
)

// hostileSubcommand turns s3cond-bench into a crowd of anonymous slow
// clients, to measure what they cost the server's memory
// (docs/security.md, "Connection caps").
const hostileSubcommand = "hostile"

func parseHostileFlags(args []string) (bench.Hostile, error) {
	fs := flag.NewFlagSet("s3cond-bench hostile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var h bench.Hostile
	fs.StringVar(&h.Address, "address", "", "host:port of the server, loopback only, e.g. 127.0.0.1:9000")
	fs.StringVar(&h.Bucket, "bucket", "bench", "bucket the forms are posted to")
	fs.IntVar(&h.Conns, "conns", 1000, "connections to open (mind ulimit -n)")
	fs.IntVar(&h.HeaderBytes, "header-bytes", 9<<20+512<<10, "length of the part header line each sends at once")
	fs.DurationVar(&h.Trickle, "trickle", 8*time.Second, "pause between the single bytes sent after it")
	fs.DurationVar(&h.Hold, "hold", 40*time.Second, "how long the clients keep going (at most 10m)")
	fs.IntVar(&h.PID, "pid", 0, "process ID of the server, whose memory is read")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(nil)
			fmt.Fprintln(fs.Output(), "usage: s3cond-bench hostile --address HOST:PORT --pid PID [flags]")
			fs.PrintDefaults()
			return h, errHelp
		}
		return h, err
	}
	switch {
	case h.Address == "" || h.PID <= 0:
		return h, errors.New("hostile: --address and --pid are required")
	case h.Conns <= 0 || h.Conns > 20000:
		return h, errors.New("hostile: --conns must be 1..20000")
	case h.Hold <= 0 || h.Hold > 10*time.Minute:
		return h, errors.New("hostile: --hold must be in (0, 10m]")
	}
	return h, nil
}

// mainHostile runs the hostile subcommand and returns the exit status.
func mainHostile(args []string) int {
	h, err := parseHostileFlags(args)
	if err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "s3cond-bench:", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.RunHostile(ctx, h)
	if err != nil {
		fmt.Fprintln(os.Stderr, "s3cond-bench hostile:", err)
		return exitUsage
	}
	bench.WriteHostile(os.Stdout, h, res)
	return 0
}
