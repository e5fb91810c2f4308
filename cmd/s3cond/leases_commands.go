package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/leasestore"
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
	if !f.force {
		if err := refuseLiveHolder(ctx, f, env); err != nil {
			return err
		}
	}
	released, err := releaseRow(ctx, f, env)
	if err != nil {
		return releaseError(err, released)
	}
	if released.Generation == f.generation {
		fmt.Fprintf(stdout, "%s (etag %s) was already released at generation %d; nothing written\n", f.path, f.etag, f.generation)
		return nil
	}
	fmt.Fprintf(stdout, "released %s (etag %s, owner %s): generation %d -> %d; the next conditional write on it takes it over at once\n",
		f.path, f.etag, printable(released.Owner), f.generation, released.Generation)
	return nil
}

// releaseRow releases f's row wherever f and the config say it can be
// written: the shared store with the config's credentials, the embedded
// lease file while no s3cond holds it, or else the running s3cond's admin
// listener with its token. It returns the row as released, or as it now
// is when the release was refused because the row moved on.
func releaseRow(ctx context.Context, f leasesFlags, env []string) (*dynamolease.Record, error) {
	if f.admin != "" && f.adminTokenFile != "" {
		return releaseThroughAdmin(ctx, f.admin, f.adminTokenFile, f)
	}
	cfg, err := loadConfig(commonFlags{config: f.config}, env)
	if err != nil {
		return nil, err
	}
	if f.admin != "" {
		return releaseThroughAdmin(ctx, f.admin, adminTokenPath(f, cfg), f)
	}
	store, err := leasestore.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	released, err := store.Release(ctx, f.path, f.etag, f.generation)
	if errors.Is(err, leasestore.ErrOnlyRunning) {
		return releaseOfRunning(ctx, f, cfg, err.Error())
	}
	return released, err
}

// releaseError adds to a refused release what the row now is.
func releaseError(err error, current *dynamolease.Record) error {
	if errors.Is(err, dynamolease.ErrReleaseGeneration) && current != nil {
		return fmt.Errorf("%w\nnot released: the row is now at generation %d, owner %s, %s (its holder renewed it or someone took it over: it is alive)",
			err, current.Generation, printable(current.Owner), leaseState(*current))
	}
	return err
}
