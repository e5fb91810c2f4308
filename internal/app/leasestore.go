package app

import (
	"context"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/internal/config"
)

// openLeaseTable opens the lease store lease.store names: the one place
// that chooses among them (each is a package of its own beneath
// dynamolease, so the proxy depends on none of them). What it opens, the
// App closes.
func (a *App) openLeaseTable(ctx context.Context, cfg *config.Config, opts dynamolease.Options, log zerolog.Logger) (dynamolease.Table, error) {
	switch cfg.Lease.Store {
	case config.LeaseStoreMemory:
		return dynamolease.NewMemTable(), nil
	case config.LeaseStoreDynamoDB:
		client, err := newDynamoClient(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return newDynamoLeaseTable(client, cfg), nil
	case config.LeaseStoreEtcd:
		return a.openEtcdTable(cfg)
	default:
		return a.openBoltTable(cfg, opts, log)
	}
}

// openBoltTable opens the embedded lease file, and sweeps its expired rows
// until the App closes.
func (a *App) openBoltTable(cfg *config.Config, opts dynamolease.Options, log zerolog.Logger) (dynamolease.Table, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data_dir: %w", err)
	}
	bolt, err := boltstore.Open(cfg.LeasePath(), boltstore.Options{Lease: opts, Log: log.With().Str("component", "lease").Logger()})
	if err != nil {
		return nil, fmt.Errorf("lease.path: open the embedded lease store: %w", err)
	}
	if why, writableAt, discarded := bolt.Discarded(); discarded {
		log.Warn().Str("lease_file", cfg.LeasePath()).Str("why", why).Time("conditional_writes_resume", writableAt).
			Msg("the embedded lease file cannot be trusted (see why) and starts afresh; conditional writes get 503 until any lease recorded in the old one has expired")
	}
	stopSweeping := bolt.SweepPeriodically(cfg.Lease.TTL, log)
	a.closers = append(a.closers, func(context.Context) error { stopSweeping(); return bolt.Close() })
	return bolt, nil
}

// LeaseTableExists reports whether cfg's DynamoDB lease table exists.
func LeaseTableExists(ctx context.Context, cfg *config.Config) (bool, error) {
	client, err := newDynamoClient(ctx, cfg)
	if err != nil {
		return false, err
	}
	return dynamostore.TableExists(ctx, client, cfg.Lease.DynamoDB.Table)
}
