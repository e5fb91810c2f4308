package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/internal/app"
	"github.com/s3cond/s3cond/internal/config"
)

func leasesList(ctx context.Context, f leasesFlags, env []string, stdout, stderr io.Writer) error {
	view, err := readLeases(ctx, f, env, f.prefix)
	if err != nil {
		return err
	}
	if f.held {
		held := view.rows[:0]
		for _, r := range view.rows {
			if !r.Released {
				held = append(held, r)
			}
		}
		view.rows = held
	}
	// On stderr, so that stdout holds only the rows, JSON or table.
	fmt.Fprintf(stderr, "%d lease rows from %s\n", len(view.rows), view.via)
	if f.json {
		return printLeaseJSON(stdout, view, time.Now())
	}
	return printLeaseTable(stdout, view, time.Now())
}

func leasesShow(ctx context.Context, f leasesFlags, env []string, stdout, stderr io.Writer) error {
	view, err := readLeases(ctx, f, env, f.path)
	if err != nil {
		return err
	}
	mine := view.rows[:0]
	for _, r := range view.rows {
		if r.Path == f.path && (f.etag == "" || r.ETag == f.etag) {
			mine = append(mine, r)
		}
	}
	view.rows = mine
	fmt.Fprintf(stderr, "from %s\n", view.via)
	if f.json {
		return printLeaseJSON(stdout, view, time.Now())
	}
	if len(view.rows) == 0 {
		return fmt.Errorf("no lease row for %q in %s", f.path, view.via)
	}
	printLeaseDetails(stdout, view, time.Now())
	return nil
}

func leasesRelease(ctx context.Context, f leasesFlags, env []string, stdout io.Writer) error {
	cfg, err := loadConfig(commonFlags{config: f.config}, env)
	if err != nil {
		return err
	}
	var released *dynamolease.Record
	switch cfg.Lease.Store {
	case config.LeaseStoreDynamoDB, config.LeaseStoreEtcd:
		store, err := app.OpenLeaseStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer store.Close()
		released, err = dynamolease.ReleaseRow(ctx, store.Table, f.path, f.etag, f.generation)
		if err != nil {
			return releaseError(err, released)
		}
	case config.LeaseStoreMemory:
		return errors.New("lease.store is memory: its leases live in the running s3cond and end with it; there is nothing to release from outside")
	default:
		released, err = boltstore.ReleaseInLeaseFile(ctx, cfg.LeasePath(), f.path, f.etag, f.generation)
		if errors.Is(err, boltstore.ErrLeaseFileInUse) {
			return fmt.Errorf("%w\na running s3cond holds the embedded lease file, and release never goes through its admin listener: "+
				"stop s3cond (a graceful stop releases every lease it holds), release, and start it again; "+
				"or wait: a conditional write takes the row over %s (lease.timeout × max_clock_skew_rate) after s3cond first saw it",
				err, cfg.Lease.TakeoverAfter())
		}
		if err != nil {
			return releaseError(err, released)
		}
	}
	if released.Generation == f.generation {
		fmt.Fprintf(stdout, "%s (etag %s) was already released at generation %d; nothing written\n", f.path, f.etag, f.generation)
		return nil
	}
	fmt.Fprintf(stdout, "released %s (etag %s, owner %s): generation %d -> %d; the next conditional write on it takes it over at once\n",
		f.path, f.etag, printable(released.Owner), f.generation, released.Generation)
	return nil
}

// releaseError adds to a refused release what the row now is.
func releaseError(err error, current *dynamolease.Record) error {
	if errors.Is(err, dynamolease.ErrReleaseGeneration) && current != nil {
		return fmt.Errorf("%w\nnot released: the row is now at generation %d, owner %s, %s (its holder renewed it or someone took it over: it is alive)",
			err, current.Generation, printable(current.Owner), leaseState(*current))
	}
	return err
}
