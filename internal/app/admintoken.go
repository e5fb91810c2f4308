package app

import (
	"context"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
)

// releasesThroughAdmin reports whether cfg's lease rows can be released
// only by the running process, through its admin listener: the embedded
// lease file it holds locked, or its memory table. Shared stores are
// released through the store itself, with the config's credentials.
func releasesThroughAdmin(cfg *config.Config) bool {
	return cfg.Admin.Listen != "" &&
		(cfg.Lease.Store == config.LeaseStoreEmbedded || cfg.Lease.Store == config.LeaseStoreMemory)
}

// createAdminToken writes this run's admin token to data_dir when the
// admin listener serves POST /leases/release, and removes it when the App
// closes; it returns "" when the endpoint is not served. The token never
// reaches a log: only its file's path does.
func (a *App) createAdminToken(cfg *config.Config, log zerolog.Logger) (string, error) {
	if !releasesThroughAdmin(cfg) {
		return "", nil
	}
	if cfg.DataDir == "" {
		log.Warn().Msg("data_dir is empty: no admin token file, so `s3cond leases release` cannot reach this s3cond while it runs")
		return "", nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return "", fmt.Errorf("data_dir: %w", err)
	}
	file, err := admin.CreateTokenFile(cfg.DataDir)
	if err != nil {
		return "", fmt.Errorf("admin.listen: %w", err)
	}
	a.closers = append(a.closers, func(context.Context) error { return file.Remove() })
	log.Info().Str("admin_token_file", file.Path).
		Msg("admin listener: POST " + admin.LeaseReleasePath + " releases a lease for whoever can read this file")
	return file.Token, nil
}
