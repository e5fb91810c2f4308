//go:build pprof

package main

import (
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/rs/zerolog"
)

// A build with -tags pprof serves Go's profiler on the address in this
// variable, for performance work (docs/performance.md). Release builds have
// no profiler at all: it would expose the process's memory to anyone who can
// reach the port.
const pprofEnv = "S3COND_PPROF_LISTEN"

func startProfiler(env []string, log zerolog.Logger) {
	var addr string
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok && name == pprofEnv {
			addr = value
		}
	}
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Warn().Str("listen", addr).Msg("profiler enabled (pprof build)")
	go func() {
		if err := http.ListenAndServe(addr, mux); err != nil {
			log.Error().Err(err).Msg("profiler stopped")
		}
	}()
}
