//go:build !pprof

package main

import "github.com/rs/zerolog"

// pprofEnv is read only by builds with -tags pprof (pprof.go).
const pprofEnv = "S3COND_PPROF_LISTEN"

func startProfiler([]string, zerolog.Logger) {}
