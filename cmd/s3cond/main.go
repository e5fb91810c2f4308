// Command s3cond is an S3-compatible reverse proxy that gives any S3 storage
// Amazon S3's conditional writes (If-None-Match: *, If-Match: <etag>).
//
//	s3cond [serve] [--config FILE] [--listen ADDR]   serve the S3 API (embedded defaults without --config)
//	s3cond table create --config FILE                  create the DynamoDB lease table (idempotent); with etcd, check the cluster
//	s3cond check-config --config FILE                  validate and print the effective config, secrets masked
//	s3cond probe --bucket B --config FILE | --endpoint URL ...   measure which conditions the store honours
//	s3cond leases list|show|release ...              inspect lease rows; free one whose holder is known dead
//	s3cond version
//
// main → serve → app.Build (internal/app) wires proxy.New; a request's
// path from there is drawn once, in docs/architecture.md ("The request
// path"), which a test keeps in step with proxy's code.
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
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "s3cond:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a command-line mistake: print usage, exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, env, stdout, stderr)
	case "table":
		if len(args) == 0 || args[0] != "create" {
			return usageError{"usage: s3cond table create --config FILE"}
		}
		return tableCreate(ctx, args[1:], env, stdout, stderr)
	case "check-config":
		return checkConfig(ctx, args, env, stdout)
	case "probe":
		return probeCommand(ctx, args, env, stdout, stderr)
	case "leases":
		return leasesCommand(ctx, args, env, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "s3cond", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q\n%s", cmd, usage)}
}

const usage = `usage:
  s3cond [serve] [--config FILE] [--listen ADDR]   serve the S3 API (embedded development defaults without --config)
  s3cond table create --config FILE                  create the DynamoDB lease table (idempotent); with etcd, check the cluster
  s3cond check-config --config FILE                  validate and print the effective config, secrets masked
  s3cond probe --bucket B (--config FILE [--backend NAME] | --endpoint URL ...)   measure which conditions the store honours
  s3cond leases list [--config FILE | --admin URL] [--prefix P] [--held]   list lease rows (key, ETag, owner, generation, age)
  s3cond leases show [--config FILE | --admin URL] BUCKET/KEY               one key's lease rows
  s3cond leases release [--config FILE] --generation N --yes BUCKET/KEY     free a row whose holder is known dead
  s3cond leases recreate-table --config FILE --yes                          recreate a lost DynamoDB lease table after its leases' wait
  s3cond version
`

// commonFlags are shared by every command that reads a config.
type commonFlags struct {
	config string
	listen string
}

func parseFlags(name string, args []string, stderr io.Writer) (commonFlags, error) {
	var f commonFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "config file (YAML); empty: embedded development defaults")
	fs.StringVar(&f.listen, "listen", "", "address to listen on (overrides server.listen)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, usageError{usage}
		}
		return f, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return f, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return f, nil
}
