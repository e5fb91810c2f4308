package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/leasestore"
)

// leaseView is what list and show print: rows, where they were read, and
// the settings that turn a row's TTL into its age.
type leaseView struct {
	rows     []dynamolease.Record
	via      string
	leaseTTL time.Duration
	skewRate float64
}

// Bounds on reading a running s3cond's listing: each page's answer (the
// rows of all pages together are bounded as a store's are, by
// leasestore.MaxListedRows).
const (
	adminCallTimeout = 10 * time.Second
	maxListingBytes  = 64 << 20
)

// readLeases reads the rows under prefix from wherever f and the config
// say they are.
func readLeases(ctx context.Context, f leasesFlags, env []string, prefix string) (leaseView, error) {
	cfg, err := loadConfig(commonFlags{config: f.config}, env)
	if err != nil {
		return leaseView{}, err
	}
	if f.admin != "" {
		return readLeasesFromAdmin(ctx, f.admin, adminTokenPath(f, cfg), prefix)
	}
	settings := leaseView{leaseTTL: cfg.Lease.TTL, skewRate: cfg.Lease.MaxClockSkewRate}
	store, err := leasestore.Open(ctx, cfg)
	if err != nil {
		return leaseView{}, err
	}
	defer store.Close()
	settings.via = store.Where()
	settings.rows, err = store.List(ctx, prefix)
	if errors.Is(err, leasestore.ErrOnlyRunning) {
		return readLeasesOfRunning(ctx, f, cfg, prefix, err.Error())
	}
	return settings, err
}

// readLeasesOfRunning reads through the admin listener of cfg, for leases
// only a running s3cond can read; why says so in errors.
func readLeasesOfRunning(ctx context.Context, f leasesFlags, cfg *config.Config, prefix, why string) (leaseView, error) {
	if cfg.Admin.Listen == "" {
		return leaseView{}, fmt.Errorf("%s, and admin.listen is off: pass --admin URL", why)
	}
	view, err := readLeasesFromAdmin(ctx, cfg.Admin.Listen, adminTokenPath(f, cfg), prefix)
	if err != nil {
		return leaseView{}, fmt.Errorf("%s; reading through its admin listener: %w", why, err)
	}
	return view, nil
}

// adminURL is endpoint on the admin listener at base (an address, or a URL).
func adminURL(base, endpoint string) (*url.URL, error) {
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/") + endpoint)
	if err != nil {
		return nil, fmt.Errorf("--admin %q: %w", base, err)
	}
	return u, nil
}

// readLeasesFromAdmin reads every page of the listing under prefix from
// the admin listener at base, presenting the token in tokenFile.
func readLeasesFromAdmin(ctx context.Context, base, tokenFile, prefix string) (leaseView, error) {
	token, err := readAdminToken(tokenFile)
	if err != nil {
		return leaseView{}, err
	}
	u, err := adminURL(base, admin.LeasesPath)
	if err != nil {
		return leaseView{}, err
	}
	view := leaseView{via: "admin listener " + u.Scheme + "://" + u.Host}
	after := ""
	for {
		u.RawQuery = url.Values{"prefix": {prefix}, "after": {after}}.Encode()
		listing, err := readLeasePage(ctx, u, token)
		if err != nil {
			return leaseView{}, err
		}
		view.leaseTTL, view.skewRate = listing.LeaseTTL, listing.MaxClockSkewRate
		for _, row := range listing.Rows {
			view.rows = append(view.rows, row.Record())
		}
		if len(view.rows) > leasestore.MaxListedRows {
			return view, fmt.Errorf("the listing of %s passed %d rows: narrow it with --prefix", view.via, leasestore.MaxListedRows)
		}
		if listing.Next == "" {
			break
		}
		after = listing.Next
	}
	// Pages come in the store's order.
	dynamolease.SortRecords(view.rows)
	return view, nil
}

// readLeasePage GETs one page of the listing at u.
func readLeasePage(ctx context.Context, u *url.URL, token string) (admin.LeaseListing, error) {
	ctx, cancel := context.WithTimeout(ctx, adminCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return admin.LeaseListing{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	where := "GET " + u.Scheme + "://" + u.Host + admin.LeasesPath
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return admin.LeaseListing{}, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxListingBytes))
	if err != nil {
		return admin.LeaseListing{}, fmt.Errorf("%s: %w", where, err)
	}
	if resp.StatusCode != http.StatusOK {
		return admin.LeaseListing{}, fmt.Errorf("%s: %s: %s (an s3cond older than the leases command answers 404)",
			where, resp.Status, strings.TrimSpace(string(body)))
	}
	var listing admin.LeaseListing
	if err := json.Unmarshal(body, &listing); err != nil {
		return admin.LeaseListing{}, fmt.Errorf("%s: not a lease listing: %w", where, err)
	}
	return listing, nil
}
