package app

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
)

// probeStore is the start-up probe's report on b: the verdict data_dir
// keeps when the store is still the one it was measured on (endpoint,
// probe bucket, Server header and version) and reprobe_on_start is off,
// else a fresh probe, kept if it measured every capability. Asking the
// store who it is comes out of the probe's own bound.
func (a *App) probeStore(ctx context.Context, b config.Backend, opts probe.Options, log zerolog.Logger) (probe.Report, error) {
	deadline := time.Now().Add(opts.Timeout)
	path := verdictPath(a.dataDir, b.Name)
	asking := opts
	asking.Timeout = opts.Timeout / 4
	id, idErr := probe.StoreIdentity(ctx, asking)
	if idErr != nil {
		log.Warn().Err(idErr).Str("backend", b.Name).Msg("the store did not say who it is: probing it; its verdict is kept for its racy findings only")
		// Racy findings of this endpoint and bucket hold, and are kept
		// (holdBackRacy) under a Server no store sends, so that the report
		// itself is never reused.
		id = probe.Identity{Endpoint: opts.Endpoint, Bucket: opts.Bucket, Server: unidentifiedStore}
	}
	blog := log.With().Str("backend", b.Name).Logger()
	if idErr == nil && !b.ReprobeOnStart {
		if kept, ok := keptVerdictFor(path, id, blog); ok {
			log.Info().Str("backend", b.Name).Str("server", id.Server).Str("version", id.Version).
				Time("probed_at", kept.ProbedAt).Str("file", path).
				Msg("reused the kept probe verdict: same endpoint, probe bucket, Server header and version (backend.reprobe_on_start probes anyway)")
			// A verdict kept before the known-racy table listed the store.
			return holdBackRacy(kept.Report, path, id, blog), nil
		}
	}
	opts.Timeout = max(time.Until(deadline), time.Second)
	// The verdict is what start-up waits for; deleting the scratch keys
	// goes on beside the listener (bounded by the probe; Close waits).
	opts.DeferCleanup = func(cleanup func()) { a.probeCleanups.Go(cleanup) }
	rep, err := probe.Run(ctx, opts)
	if err != nil {
		return rep, err
	}
	rep = holdBackRacy(rep, path, id, blog)
	if idErr == nil || raced(rep) {
		keepVerdict(path, storedVerdict{Backend: b.Name, Store: id, ProbedAt: time.Now().UTC(), Report: rep}, log)
	}
	return rep, nil
}

// unidentifiedStore is the Server kept for a store that did not say who
// it is: not a product token (RFC 9110), so no well-formed Server header.
const unidentifiedStore = "( )"

// keptVerdictFor is the verdict kept at path if it was measured on the
// store id names.
func keptVerdictFor(path string, id probe.Identity, log zerolog.Logger) (storedVerdict, bool) {
	kept, found, err := loadVerdict(path)
	switch {
	case err != nil:
		log.Warn().Err(err).Msg("the kept probe verdict is unreadable: probing the store again")
		return kept, false
	case !found:
		return kept, false
	case !measured(kept.Report):
		// Kept for its racy findings only (keepVerdict): measure again.
		return kept, false
	case kept.Store != id:
		log.Info().Str("kept_server", kept.Store.Server).Str("server", id.Server).
			Str("kept_version", kept.Store.Version).Str("version", id.Version).
			Str("kept_endpoint", kept.Store.Endpoint).Str("endpoint", id.Endpoint).
			Msg("the store changed since its kept probe verdict: probing it again")
		return kept, false
	}
	return kept, true
}

// keepVerdict keeps v in data_dir unless a capability could not be
// measured and none is known racy (a racy finding is kept whatever else
// the probe missed: holdBackRacy); a failure to write is logged, not
// fatal: the next start probes.
func keepVerdict(path string, v storedVerdict, log zerolog.Logger) {
	if path == "" || (!measured(v.Report) && !raced(v.Report)) {
		return
	}
	if err := saveVerdict(path, v); err != nil {
		log.Warn().Err(err).Str("backend", v.Backend).Msg("the probe verdict could not be kept: the next start probes again")
	}
}

// waitForProbeCleanups waits, within ctx, for the start-up probes'
// cleanups still running.
func (a *App) waitForProbeCleanups(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		a.probeCleanups.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("start-up probe cleanup still deleting its scratch keys: %w", ctx.Err())
	}
}
