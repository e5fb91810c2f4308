package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

func TestLeasesListsRowsUnderPrefix(t *testing.T) {
	table := dynamolease.NewMemTable()
	for _, path := range []string{"b/a", "b/z", "c/a"} {
		if _, err := table.Create(context.Background(), dynamolease.Record{Path: path, ETag: "*", Generation: 1,
			Timeout: time.Second, TTL: time.Unix(2e9, 0), Owner: "host:1#t/1"}); err != nil {
			t.Fatal(err)
		}
	}
	h := LeasesHandler(table, "tok", time.Hour, 3)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, withToken(httptest.NewRequest(http.MethodGet, "/leases?prefix=b/", nil), "tok"))
	var listing LeaseListing
	if err := json.Unmarshal(rec.Body.Bytes(), &listing); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /leases: %d %s, %v", rec.Code, rec.Body, err)
	}
	if len(listing.Rows) != 2 || listing.Rows[0].Path != "b/a" || listing.Rows[1].Owner != "host:1#t/1" ||
		listing.LeaseTTL != time.Hour || listing.MaxClockSkewRate != 3 || !listing.Rows[0].TTL.Equal(time.Unix(2e9, 0)) {
		t.Fatalf("listing = %+v", listing)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, withToken(httptest.NewRequest(http.MethodGet, "/leases?prefix="+strings.Repeat("p", maxLeasePrefix+1), nil), "tok"))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("an overlong prefix: %d, want 400", rec.Code)
	}
}

func withToken(r *http.Request, token string) *http.Request {
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// GET /leases lists object keys and their owners: without the admin token
// it answers 401 and reads nothing (issue 32, finding 3: it was open to
// whoever reached the listener).
func TestLeasesNeedsTheAdminToken(t *testing.T) {
	h := LeasesHandler(refusingLister{t}, "tok", time.Hour, 3)
	for _, auth := range []string{"", "Bearer wrong", "Basic tok"} {
		r := httptest.NewRequest(http.MethodGet, "/leases", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", auth, rec.Code)
		}
	}
}

// refusingLister fails the test if read: it stands for a store that must
// not be reached.
type refusingLister struct{ t *testing.T }

func (l refusingLister) ListPage(context.Context, string, string, int) ([]dynamolease.Record, string, error) {
	l.t.Error("the store was read")
	return nil, "", nil
}

// A request reads one bounded page; following the continuation tokens
// reads every row once (issue 32, finding 3: a full scan per request).
func TestLeasesArePaged(t *testing.T) {
	table := dynamolease.NewMemTable()
	for i := range 7 {
		if _, err := table.Create(context.Background(), dynamolease.Record{Path: fmt.Sprintf("b/%02d", i), ETag: "*",
			Generation: 1, Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	h := LeasesHandler(table, "tok", time.Hour, 3)
	var seen []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatalf("more than 4 pages of 2 for 7 rows: %v", seen)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, withToken(httptest.NewRequest(http.MethodGet, "/leases?limit=2&after="+after, nil), "tok"))
		var listing LeaseListing
		if err := json.Unmarshal(rec.Body.Bytes(), &listing); err != nil || rec.Code != http.StatusOK || len(listing.Rows) > 2 {
			t.Fatalf("page %d: %d %s, %v", pages, rec.Code, rec.Body, err)
		}
		for _, row := range listing.Rows {
			seen = append(seen, row.Path)
		}
		if listing.Next == "" {
			break
		}
		after = listing.Next
	}
	if strings.Join(seen, ",") != "b/00,b/01,b/02,b/03,b/04,b/05,b/06" {
		t.Fatalf("pages listed %v", seen)
	}
	for _, bad := range []string{"limit=0", "limit=1001", "after=!!!", "after=bm90LWEtcG9zaXRpb24"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, withToken(httptest.NewRequest(http.MethodGet, "/leases?"+bad, nil), "tok"))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, rec.Code)
		}
	}
}
