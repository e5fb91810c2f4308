package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
)

// With the admin listener on and leases only this process can write, Build
// writes the token file, the admin handler releases for its holder, and
// Close removes it.
func TestAdminReleaseOnTheProcessOwnTable(t *testing.T) {
	cfg := devConfig(t)
	a, err := Build(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	tokenPath := filepath.Join(cfg.DataDir, admin.TokenFileName)
	token, err := admin.ReadTokenFile(tokenPath)
	if err != nil {
		t.Fatalf("no token file after Build: %v", err)
	}
	if _, err := a.leaseTable.Create(context.Background(), dynamolease.Record{Path: "b/k", ETag: "*", Generation: 5,
		Timeout: time.Minute, TTL: time.Now().Add(time.Hour), Owner: "gone:1#x/1"}); err != nil {
		t.Fatal(err)
	}
	post := func(authorization string) int {
		req := httptest.NewRequest(http.MethodPost, admin.LeaseReleasePath+"?path=b/k&etag=*&generation=5", nil)
		req.Header.Set("Authorization", authorization)
		rec := httptest.NewRecorder()
		a.AdminHandler.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := post("Bearer not-the-token"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	rec := httptest.NewRecorder()
	a.AdminHandler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, admin.LeaseReleasePath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET %s: %d, want 405", admin.LeaseReleasePath, rec.Code)
	}
	if code := post("Bearer " + token); code != http.StatusOK {
		t.Fatalf("release with the token: %d", code)
	}
	if row, _ := a.leaseTable.Get(context.Background(), "b/k", "*"); row == nil || !row.Released || row.Generation != 6 {
		t.Fatalf("row after the release: %+v", row)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tokenPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("token file after Close: %v, want it gone", err)
	}
}

func TestReleasesThroughAdminOnlyForLocalStores(t *testing.T) {
	for store, want := range map[string]bool{config.LeaseStoreEmbedded: true, config.LeaseStoreMemory: true,
		config.LeaseStoreDynamoDB: false, config.LeaseStoreEtcd: false} {
		cfg := config.Default()
		cfg.Lease.Store = store
		if got := releasesThroughAdmin(cfg); got != want {
			t.Errorf("lease.store %s: %v, want %v", store, got, want)
		}
		cfg.Admin.Listen = ""
		if releasesThroughAdmin(cfg) {
			t.Errorf("lease.store %s with the admin listener off serves release", store)
		}
	}
}
