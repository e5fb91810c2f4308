package boltstore

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

// SweepPeriodically runs Sweep every quarter of ttl (at least every minute)
// until stop is called: the work DynamoDB's TTL does for a shared table;
// without it the file only grows. stop waits for a sweep in progress.
func (b *Table) SweepPeriodically(ttl time.Duration, log zerolog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	interval := max(ttl/4, time.Minute)
	go func() {
		defer close(done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				n, err := b.Sweep(ctx, time.Now())
				if err != nil {
					log.Warn().Err(err).Msg("sweeping expired leases")
				} else if n > 0 {
					log.Debug().Int("removed", n).Msg("swept expired leases")
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
