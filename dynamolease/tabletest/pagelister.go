package tabletest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// PageListerTable is a Table whose rows the admin listener lists a page
// at a time.
type PageListerTable interface {
	dynamolease.Table
	dynamolease.PageLister
}

// RunPageLister checks ListPage: following the positions from the first
// page lists every row under the prefix exactly once, in pages of at most
// the limit, and a position the table never gave is ErrBadPosition (it
// comes from whoever reaches the admin listener). tbl may hold other rows.
func RunPageLister(t *testing.T, tbl PageListerTable) {
	ctx := context.Background()
	prefix := fmt.Sprintf("bucket/pages/%d/", time.Now().UnixNano())
	want := map[string]bool{}
	for i := range 7 {
		path := fmt.Sprintf("%s%02d", prefix, i)
		want[path] = true
		if _, err := tbl.Create(ctx, dynamolease.Record{Path: path, ETag: "*", Generation: 1, Timeout: time.Second,
			TTL: time.Now().Add(time.Hour), Owner: "host:1#t/1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Create(ctx, dynamolease.Record{Path: "bucket/elsewhere/" + prefix, ETag: "*", Generation: 1,
		Timeout: time.Second, TTL: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	after := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("no end of pages; seen %v", seen)
		}
		rows, next, err := tbl.ListPage(ctx, prefix, after, 2)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(rows) > 2 {
			t.Fatalf("page %d holds %d rows, the limit is 2", pages, len(rows))
		}
		for _, r := range rows {
			if !strings.HasPrefix(r.Path, prefix) {
				t.Fatalf("page %d lists %q, outside %q", pages, r.Path, prefix)
			}
			seen[r.Path]++
		}
		if next == "" {
			break
		}
		after = next
	}
	for path := range want {
		if seen[path] != 1 {
			t.Errorf("%s listed %d times, want once", path, seen[path])
		}
	}
	if _, _, err := tbl.ListPage(ctx, prefix, "not-a-position", 2); !errors.Is(err, dynamolease.ErrBadPosition) {
		t.Fatalf("a forged position: %v, want ErrBadPosition", err)
	}
}
