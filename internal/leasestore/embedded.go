package leasestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/internal/config"
)

// embeddedStore is lease.store embedded: the bbolt file in data_dir, which
// one serving s3cond holds open; a one-shot command opens it only while
// none does.
type embeddedStore struct{ cfg *config.Config }

// serve opens the lease file, and sweeps its expired rows until the Store
// closes.
func (e embeddedStore) serve(s *Store, opts dynamolease.Options, log zerolog.Logger) (dynamolease.Table, error) {
	if err := os.MkdirAll(e.cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data_dir: %w", err)
	}
	bolt, err := boltstore.Open(e.cfg.LeasePath(), boltstore.Options{Lease: opts, Log: log.With().Str("component", "lease").Logger()})
	if err != nil {
		return nil, fmt.Errorf("lease.path: open the embedded lease store: %w", err)
	}
	if why, writableAt, discarded := bolt.Discarded(); discarded {
		log.Warn().Str("lease_file", e.cfg.LeasePath()).Str("why", why).Time("conditional_writes_resume", writableAt).
			Msg("the embedded lease file cannot be trusted (see why) and starts afresh; conditional writes get 503 until any lease recorded in the old one has expired")
	}
	stopSweeping := bolt.SweepPeriodically(e.cfg.Lease.TTL, log)
	s.closers = append(s.closers, func() error { stopSweeping(); return bolt.Close() })
	return bolt, nil
}

// list reads the file in one read-only transaction: it is local, and a
// bolt cursor reads it a page of the file at a time.
func (e embeddedStore) list(_ context.Context, prefix string, _ int) ([]dynamolease.Record, error) {
	rows, err := boltstore.ReadLeaseFile(e.cfg.LeasePath(), prefix)
	switch {
	case errors.Is(err, boltstore.ErrLeaseFileInUse):
		return nil, e.heldByRunning()
	case errors.Is(err, fs.ErrNotExist):
		// No file: no s3cond has taken a lease in this data_dir.
		return nil, fmt.Errorf("no lease file at %s (data_dir %q): no s3cond has taken a lease there", e.cfg.LeasePath(), e.cfg.DataDir)
	}
	return rows, err
}

func (e embeddedStore) release(ctx context.Context, path, etag string, generation uint64) (*dynamolease.Record, error) {
	released, err := boltstore.ReleaseInLeaseFile(ctx, e.cfg.LeasePath(), path, etag, generation)
	if errors.Is(err, boltstore.ErrLeaseFileInUse) {
		return nil, e.heldByRunning()
	}
	return released, err
}

func (e embeddedStore) heldByRunning() error {
	return onlyRunning{"a running s3cond holds the lease file " + e.cfg.LeasePath()}
}

func (embeddedStore) create(context.Context, zerolog.Logger) (string, error) {
	return "", nothingToCreate(config.LeaseStoreEmbedded)
}

func (embeddedStore) exists(context.Context) (bool, error) { return true, nil }

func (e embeddedStore) where() string { return "lease file " + e.cfg.LeasePath() }
