package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// errLiveHolder refuses a release of a row its holder wrote (acquired or
// renewed) within lease.timeout: a holder that renews is alive, and its
// write may still be running at the store (issue 33 finding 5: a released
// live holder's copy landed after a second writer's acknowledged create).
var errLiveHolder = errors.New("the row's holder renewed it within its lease timeout: it is alive")

// refuseLiveHolder reads f's row and refuses to release it while its last
// write is younger than the plain lease timeout. A row it cannot date (no
// TTL: an arrow-rs or hand-written row), or that is gone or moved on, is
// left to the release itself, which is conditional on the generation.
func refuseLiveHolder(ctx context.Context, f leasesFlags, env []string) error {
	cfg, err := loadConfig(commonFlags{config: f.config}, env)
	if err != nil {
		return err
	}
	view, err := readLeases(ctx, f, env, f.path)
	if err != nil {
		return err
	}
	for _, r := range view.rows {
		if r.Path != f.path || r.ETag != f.etag || r.Generation != f.generation || r.Released {
			continue
		}
		age, ok := lastWriteAge(r, view, time.Now())
		if live := max(cfg.Lease.Timeout, r.Timeout); ok && age < live {
			return fmt.Errorf("%w: %s (etag %s, owner %s) was written %s ago, within its lease timeout (%s); not released. "+
				"Releasing a live holder's lease lets a second writer in while its write may still land; add --force only if you know it cannot",
				errLiveHolder, f.path, f.etag, printable(r.Owner), age.Round(time.Millisecond), live)
		}
	}
	return nil
}

// lastWriteAge is how long ago r was last written, off its TTL: a write
// sets it to now + max(lease.ttl, 2 × its timeout × skew) (a sized row's
// TTL outlasts its takeover wait; dynamolease's rowTTL).
func lastWriteAge(r dynamolease.Record, view leaseView, now time.Time) (time.Duration, bool) {
	if r.TTL.IsZero() || view.leaseTTL <= 0 {
		return 0, false
	}
	kept := max(view.leaseTTL, time.Duration(2*float64(r.Timeout)*view.skewRate))
	return max(now.Sub(r.TTL.Add(-kept)), 0), true
}
