package app

import (
	"net/http"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
)

// withLeaseEndpoints adds GET /leases (read-only, a page at a time) for
// holders of token, and POST /leases/release when release is true (the
// rows only this process can write). Without a token neither is served.
func withLeaseEndpoints(base http.Handler, table dynamolease.Table, lease config.Lease, token string, release bool, log zerolog.Logger) http.Handler {
	pages, _ := table.(dynamolease.PageLister)
	if token == "" || (pages == nil && !release) {
		return base
	}
	mux := http.NewServeMux()
	mux.Handle("/", base)
	if pages != nil {
		mux.Handle("GET "+admin.LeasesPath, admin.LeasesHandler(pages, token, lease.TTL, lease.MaxClockSkewRate))
	}
	if release {
		// Every method: the handler answers 405 itself, where "/" would
		// answer another method's request with 404.
		mux.Handle(admin.LeaseReleasePath, admin.ReleaseHandler(table, token, log))
	}
	return mux
}
