package admin

import (
	"context"
	"encoding/json"
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
	h := LeasesHandler(table, time.Hour, 3)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/leases?prefix=b/", nil))
	var listing LeaseListing
	if err := json.Unmarshal(rec.Body.Bytes(), &listing); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /leases: %d %s, %v", rec.Code, rec.Body, err)
	}
	if len(listing.Rows) != 2 || listing.Rows[0].Path != "b/a" || listing.Rows[1].Owner != "host:1#t/1" ||
		listing.LeaseTTL != time.Hour || listing.MaxClockSkewRate != 3 || !listing.Rows[0].TTL.Equal(time.Unix(2e9, 0)) {
		t.Fatalf("listing = %+v", listing)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/leases?prefix="+strings.Repeat("p", maxLeasePrefix+1), nil))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("an overlong prefix: %d, want 400", rec.Code)
	}
}
