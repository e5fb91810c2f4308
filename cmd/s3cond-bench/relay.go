package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/cmd/s3cond-bench/internal/bench"
)

// relaySubcommand is the first argument that turns s3cond-bench into a bare
// TCP relay, the baseline for what one extra hop costs.
const relaySubcommand = "relay"

// relayConfig is everything the relay subcommand's flags decide.
type relayConfig struct {
	listen string // host:port to accept on
	target string // host:port to forward to
	http   bool   // Go's HTTP reverse proxy instead of a byte relay
}

func parseRelayFlags(args []string) (relayConfig, error) {
	fs := flag.NewFlagSet("s3cond-bench relay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg relayConfig
	fs.StringVar(&cfg.listen, "listen", "", "host:port to accept connections on, e.g. 127.0.0.1:9100")
	fs.StringVar(&cfg.target, "to", "", "host:port to forward every connection to, e.g. 127.0.0.1:7070")
	fs.BoolVar(&cfg.http, "http", false, "forward HTTP requests through Go's net/http server and httputil.ReverseProxy instead of bytes")
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printRelayUsage(fs)
			return relayConfig{}, errHelp
		}
		return relayConfig{}, err
	}
	if fs.NArg() > 0 {
		return relayConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, required := range []struct{ name, value string }{{"listen", cfg.listen}, {"to", cfg.target}} {
		if required.value == "" {
			return relayConfig{}, fmt.Errorf("relay: --%s is required", required.name)
		}
		if _, _, err := net.SplitHostPort(required.value); err != nil {
			return relayConfig{}, fmt.Errorf("relay: --%s %q: %w", required.name, required.value, err)
		}
	}
	return cfg, nil
}

func printRelayUsage(fs *flag.FlagSet) {
	fs.SetOutput(nil) // os.Stderr
	fmt.Fprintln(fs.Output(), relayUsage)
	fs.PrintDefaults()
}

const relayUsage = `usage: s3cond-bench relay --listen HOST:PORT --to HOST:PORT

Forwards every TCP connection accepted on --listen to --to, byte for byte,
until SIGINT or SIGTERM. Benchmarked in front of a backend, it shows what an
extra hop costs with no proxy logic at all. With --http it forwards HTTP
requests through Go's net/http server and httputil.ReverseProxy instead
(keep-alive, the client's Host passed on, no signing): what Go's HTTP
stacks cost on their own, the floor of a proxy built on them.`

// runRelay relays until ctx is cancelled.
func runRelay(ctx context.Context, cfg relayConfig, log zerolog.Logger) error {
	var lc net.ListenConfig
	listener, err := lc.Listen(ctx, "tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	log.Info().Str("listen", listener.Addr().String()).Str("to", cfg.target).Bool("http", cfg.http).Msg("relaying")
	if cfg.http {
		return (&bench.HTTPRelay{Target: cfg.target, Log: log}).Serve(ctx, listener)
	}
	relay := &bench.Relay{Target: cfg.target, Log: log}
	return relay.Serve(ctx, listener)
}
