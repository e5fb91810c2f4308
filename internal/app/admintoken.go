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

// createAdminToken writes this run's admin token to data_dir whenever the
// admin listener runs, whatever the lease store: GET /leases takes it
// (and POST /leases/release, where served). It removes the file when the
// App closes, and returns "" when there is no listener or no data_dir
// (then neither endpoint is served). The token never reaches a log: only
// its file's path does.
func (a *App) createAdminToken(cfg *config.Config, log zerolog.Logger) (string, error) {
	if cfg.Admin.Listen == "" {
		return "", nil
	}
	if cfg.DataDir == "" {
		log.Warn().Msg("data_dir is empty: no admin token file, so the admin listener serves neither " +
			admin.LeasesPath + " nor " + admin.LeaseReleasePath)
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
		Msg("admin listener: GET " + admin.LeasesPath + " (and POST " + admin.LeaseReleasePath +
			" on an embedded or memory lease store) for whoever can read this file")
	return file.Token, nil
}
