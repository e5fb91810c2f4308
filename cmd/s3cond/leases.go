package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

const leasesUsage = `usage:
  s3cond leases list    [--config FILE | --admin URL [--admin-token-file PATH]] [--prefix P] [--held] [--json]
  s3cond leases show    [--config FILE | --admin URL [--admin-token-file PATH]] [--etag E] [--json] BUCKET/KEY
  s3cond leases release [--config FILE] [--admin URL [--admin-token-file PATH]] [--etag E] --generation N --yes [--force] BUCKET/KEY
  s3cond leases recreate-table --config FILE --yes

Without --config or --admin, the embedded development defaults apply, as for s3cond itself.
list and show read the lease store with the config's credentials, or, while a running s3cond
holds the embedded lease file (or lease.store is memory), through its admin listener
(admin.listen, or --admin URL), page by page, with the token in data_dir/admin-token (or
--admin-token-file).
release frees a row whose holder is known dead, only if it is still at generation N, and
refuses one its holder wrote within its lease timeout (alive: renewing) unless --force. On a
shared store (dynamodb, etcd) it goes through the store with the config's credentials; on the
embedded lease file it opens the file while no s3cond runs, and while one holds it (or with
lease.store memory) it goes through that s3cond's admin listener with the token in
data_dir/admin-token (or --admin-token-file), readable by s3cond's user and root only.
recreate-table recreates a lost DynamoDB lease table after waiting out every lease it may have
held (s3cond leases recreate-table --help).`

// leasesFlags are the flags of `s3cond leases SUBCOMMAND`.
type leasesFlags struct {
	sub                string
	config, admin      string
	adminTokenFile     string
	prefix, etag, path string
	held, json, yes    bool
	force              bool
	generation         uint64
	generationGiven    bool
}

func leasesCommand(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "recreate-table" {
		return leasesRecreateTable(ctx, args[1:], env, stdout, stderr)
	}
	f, err := parseLeasesFlags(args, stderr)
	if err != nil {
		return err
	}
	switch f.sub {
	case "list":
		return leasesList(ctx, f, env, stdout, stderr)
	case "show":
		return leasesShow(ctx, f, env, stdout, stderr)
	default:
		return leasesRelease(ctx, f, env, stdout)
	}
}

func parseLeasesFlags(args []string, stderr io.Writer) (leasesFlags, error) {
	var f leasesFlags
	if len(args) == 0 {
		return f, usageError{leasesUsage}
	}
	f.sub, args = args[0], args[1:]
	if f.sub != "list" && f.sub != "show" && f.sub != "release" {
		return f, usageError{fmt.Sprintf("unknown leases command %q\n%s", f.sub, leasesUsage)}
	}
	fs := flag.NewFlagSet("leases "+f.sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "config file (YAML); empty: embedded development defaults")
	fs.StringVar(&f.admin, "admin", "", "a running s3cond's admin listener, e.g. http://127.0.0.1:9001")
	if f.sub != "release" {
		fs.BoolVar(&f.json, "json", false, "print JSON instead of a table")
	}
	if f.sub == "list" {
		fs.StringVar(&f.prefix, "prefix", "", "only rows whose path (BUCKET/KEY) starts with this")
		fs.BoolVar(&f.held, "held", false, "only rows not released")
	} else {
		fs.StringVar(&f.etag, "etag", "", `only the row of this expected ETag ("*" for a create); release: default "*"`)
	}
	if f.sub == "release" {
		fs.Func("generation", "the generation list or show printed (required)", func(s string) error {
			_, err := fmt.Sscan(s, &f.generation)
			f.generationGiven = err == nil
			return err
		})
		fs.BoolVar(&f.yes, "yes", false, "confirm: the row's holder is dead and its write can no longer land")
		fs.BoolVar(&f.force, "force", false, "release even a row its holder renewed within its lease timeout (a live holder)")
	}
	fs.StringVar(&f.adminTokenFile, "admin-token-file", "", "the running s3cond's admin token (default: data_dir/admin-token of the config)")
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return f, usageError{leasesUsage}
			}
			return f, usageError{err.Error() + "\n" + leasesUsage}
		}
		if fs.NArg() == 0 {
			break
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	return f, f.check(positional)
}

func (f *leasesFlags) check(positional []string) error {
	switch {
	case f.adminTokenFile != "" && f.admin == "":
		return usageError{"--admin-token-file goes with --admin URL\n" + leasesUsage}
	case f.sub != "release" && f.config != "" && f.admin != "":
		// release takes both: --config says where its token file is.
		return usageError{"--config and --admin exclude each other\n" + leasesUsage}
	case f.sub == "list" && len(positional) > 0:
		return usageError{fmt.Sprintf("unexpected argument %q (list takes --prefix)\n%s", positional[0], leasesUsage)}
	case f.sub == "list":
		return nil
	case len(positional) != 1:
		return usageError{fmt.Sprintf("leases %s needs one BUCKET/KEY\n%s", f.sub, leasesUsage)}
	}
	f.path = positional[0]
	if !strings.Contains(strings.TrimPrefix(f.path, "/"), "/") {
		return usageError{fmt.Sprintf("%q is not BUCKET/KEY", f.path)}
	}
	f.path = strings.TrimPrefix(f.path, "/")
	if f.sub == "show" {
		return nil
	}
	if f.etag == "" {
		f.etag = "*"
	}
	switch {
	case !f.generationGiven:
		return usageError{"leases release needs --generation N, the generation list or show printed: a row renewed or taken over since is not released\n" + leasesUsage}
	case !f.yes:
		return usageError{"leases release needs --yes: it lets the next conditional write on the key go ahead at once, which is safe only if the row's holder is dead and its write can no longer land\n" + leasesUsage}
	}
	return nil
}
