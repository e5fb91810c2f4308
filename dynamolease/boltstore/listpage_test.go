package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

// A page reads a bounded run of the cursor; following the positions lists
// every row of the prefix once, and a position the table never gave is
// refused (it comes from whoever reaches the admin listener).
func TestListPageFollowsTheCursor(t *testing.T) {
	table, err := Open(filepath.Join(t.TempDir(), "leases.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer table.Close()
	for i := range 9 {
		bucket := "b"
		if i%3 == 0 {
			bucket = "other"
		}
		if _, err := table.Create(context.Background(), dynamolease.Record{Path: fmt.Sprintf("%s/%02d", bucket, i),
			ETag: "*", Generation: 1, Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	after := ""
	for pages := 0; ; pages++ {
		rows, next, err := table.ListPage(context.Background(), "b/", after, 2)
		if err != nil || len(rows) > 2 || pages > 10 {
			t.Fatalf("page %d: %d rows, %v", pages, len(rows), err)
		}
		for _, r := range rows {
			seen = append(seen, r.Path)
		}
		if next == "" {
			break
		}
		after = next
	}
	if got := strings.Join(seen, ","); len(seen) != 6 || strings.Contains(got, "other") {
		t.Fatalf("pages listed %v, want the 6 rows of b/", seen)
	}
	if _, _, err := table.ListPage(context.Background(), "", "\xff\xff\xff", 2); err != dynamolease.ErrBadPosition {
		t.Fatalf("a forged position: %v, want ErrBadPosition", err)
	}
}

func TestBoltListPageSuite(t *testing.T) {
	table, err := Open(filepath.Join(t.TempDir(), "leases.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer table.Close()
	tabletest.RunPageLister(t, table)
}
