package app

import (
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/probe"
)

// holdBackRacy is rep with every capability held racy that the kept
// verdict at path (of the same endpoint and probe bucket) found racy, or
// that the known-racy table lists for the store id names; each one held
// back is logged with why. A probe's races are chances: a capability
// that lost one once, or that lost on a measured store of its kind, is
// never made native again by a start-up or a re-probe that happened to
// win its rounds. Deleting the kept verdict (docs/operations.md) is how an
// operator clears it.
func holdBackRacy(rep probe.Report, path string, id probe.Identity, log zerolog.Logger) probe.Report {
	if kept, found, err := loadVerdict(path); err == nil && found &&
		kept.Store.Endpoint == id.Endpoint && kept.Store.Bucket == id.Bucket {
		var held []probe.HeldBack
		rep, held = probe.HoldBackRaced(rep, kept.Report)
		for _, h := range held {
			log.Warn().Str("capability", h.Capability).Str("why", h.Why).Str("file", path).
				Time("probed_at", kept.ProbedAt).
				Msg("held racy: an earlier probe of this store found it racy; delete the kept verdict to measure it afresh")
		}
	}
	rep, held := probe.HoldBackKnownRaces(rep, id)
	for _, h := range held {
		log.Warn().Str("capability", h.Capability).Str("server", id.Server).Str("why", h.Why).
			Msg("held racy: the store is in the known-racy table (docs/stores.md), whatever this probe's races showed")
	}
	return rep
}

// raced reports whether a capability of rep is known racy: such a report
// is kept even when another capability could not be measured.
func raced(rep probe.Report) bool {
	for _, r := range rep.Capabilities {
		if r.Raced != "" {
			return true
		}
	}
	return false
}
