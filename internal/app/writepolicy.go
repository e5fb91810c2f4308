package app

import (
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/access"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/proxy"
)

// writePolicy builds the proxy's write policies from the configuration's
// bucket patterns, and says at start-up which buckets refuse or rewrite
// unconditional writes: an operator puzzled by a 403 or a 412 finds the
// cause in the log.
func writePolicy(cfg *config.Config, log zerolog.Logger) proxy.WritePolicy {
	if len(cfg.RequireConditionalWrites)+len(cfg.RequireConditionalDeletes)+len(cfg.CreateOnly) > 0 {
		log.Info().Strs("require_conditional_writes", cfg.RequireConditionalWrites).
			Strs("require_conditional_deletes", cfg.RequireConditionalDeletes).
			Strs("create_only", cfg.CreateOnly).Msg("write policies")
	}
	return proxy.WritePolicy{
		RequireConditionalWrites:  access.BucketMatcher(cfg.RequireConditionalWrites),
		RequireConditionalDeletes: access.BucketMatcher(cfg.RequireConditionalDeletes),
		CreateOnly:                access.BucketMatcher(cfg.CreateOnly),
	}
}
