package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/s3cond/s3cond/internal/app"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/leasestore"
)

const recreateTableUsage = `usage:
  s3cond leases recreate-table --config FILE --yes

After the DynamoDB lease table was lost (deleted, restored without its rows), leases granted
from it may still guard writes the store is doing (a sized copy or completion runs on after its
s3cond is gone). recreate-table keeps the table absent (every s3cond answers conditional
writes 503 meanwhile) for the longest lease the fleet may have granted,
max(lease.timeout, lease.max_sized_timeout) × lease.max_clock_skew_rate from the fleet's
config, then creates it. It refuses to run while the table exists: leases in a table
recreated earlier are in it, but those of the lost one are not, and only a wait from the loss
covers them. Interrupting it creates nothing.`

// leasesRecreateTable is the lost-table procedure (docs/operations.md): it
// waits out every lease the lost table may have held while the table's
// absence refuses writers, then creates the table.
func leasesRecreateTable(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("leases recreate-table", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the fleet's config file (YAML): its lease settings size the wait")
	yes := fs.Bool("yes", false, "confirm: conditional writes get 503 until the wait has passed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usageError{recreateTableUsage}
		}
		return usageError{err.Error() + "\n" + recreateTableUsage}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q\n%s", fs.Arg(0), recreateTableUsage)}
	case *configPath == "":
		return usageError{"leases recreate-table needs --config FILE, the fleet's: its lease settings size the wait\n" + recreateTableUsage}
	case !*yes:
		return usageError{"leases recreate-table needs --yes: conditional writes get 503 until the wait has passed\n" + recreateTableUsage}
	}
	cfg, err := config.Load(*configPath, env)
	if err != nil {
		return err
	}
	if cfg.Lease.Store != config.LeaseStoreDynamoDB {
		return fmt.Errorf("lease.store is %q: recreate-table is for a lost DynamoDB table (the embedded store waits by itself after losing its file; for etcd, see docs/operations.md)", cfg.Lease.Store)
	}
	store, err := leasestore.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	return recreateAfterWait(ctx, cfg, store, stdout)
}

func recreateAfterWait(ctx context.Context, cfg *config.Config, store *leasestore.Store, stdout io.Writer) error {
	table := cfg.Lease.DynamoDB.Table
	exists, err := store.TableExists(ctx)
	if err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("lease table %s exists: recreate-table waits only while the table is absent, which is what refuses writers; if it was recreated without the wait, delete it again and rerun this", table)
	}
	wait := app.LeaseOptions(cfg).LongestTakeoverWait()
	until := time.Now().Add(wait)
	fmt.Fprintf(stdout, "lease table %s is absent: conditional writes get 503 until it exists.\nwaiting %s (max(lease.timeout, lease.max_sized_timeout) × lease.max_clock_skew_rate), until %s, for every lease of the lost table to expire\n",
		table, wait, until.UTC().Format(time.RFC3339))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("interrupted before the wait ended: lease table %s not created: %w", table, ctx.Err())
	case <-timer.C:
	}
	if exists, err := store.TableExists(ctx); err != nil || exists {
		if err == nil {
			err = errors.New("someone created it during the wait: leases may have been granted beside the lost table's; check that no s3cond ran table create, then delete it and rerun this")
		}
		return fmt.Errorf("lease table %s: %w", table, err)
	}
	log, err := newLogger(cfg.Log, io.Discard)
	if err != nil {
		return err
	}
	if _, err := store.Create(ctx, log); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lease table %s is ready: conditional writes resume\n", table)
	return nil
}
