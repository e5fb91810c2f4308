package tabletest

import (
	"errors"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// testFencedTakeover: a takeover carrying the row it saw (Record.Fence)
// does not land on another row at the same generation, the case of a row
// born at generation 0 (arrow-rs's, a previous release's) swept and
// created anew since the taker read it; it lands on the row it saw.
func testFencedTakeover(t *testing.T, tbl dynamolease.Table, path string) {
	hour := time.Unix(time.Now().Add(time.Hour).Unix(), 0)
	arrowRS := func(ttl time.Time) dynamolease.Record {
		r := record(path, "", 0, "")
		r.TTL = ttl
		return r
	}
	for _, tc := range []struct {
		name      string
		seen, now dynamolease.Record
	}{
		{"another owner", record(path, "", 0, "dead"), record(path, "", 0, "live")},
		{"arrow-rs rows of two TTLs", arrowRS(hour), arrowRS(hour.Add(time.Minute))},
		{"a TTL where none was", arrowRS(time.Time{}), arrowRS(hour)},
		{"no owner where one was", record(path, "", 0, "dead"), arrowRS(hour)},
		{"another timeout", record(path, "", 0, "same"), func() dynamolease.Record {
			r := record(path, "", 0, "same")
			r.Timeout *= 2
			return r
		}()},
	} {
		etag := `"` + tc.name + `"`
		tc.seen.ETag, tc.now.ETag = etag, etag
		if _, err := tbl.Create(ctx(t), tc.now); err != nil {
			t.Fatal(err)
		}
		takeover := record(path, etag, 1, "taker")
		takeover.Fence = dynamolease.FenceOf(&tc.seen)
		current, err := tbl.Replace(ctx(t), takeover, 0)
		if !errors.Is(err, dynamolease.ErrConditionFailed) {
			t.Fatalf("%s: a takeover fenced on the row it saw landed on another row at its generation (err %v)", tc.name, err)
		}
		assertRecord(t, tc.name+": row returned by the fenced takeover", current, tc.now)
		assertRecord(t, tc.name+": row after the fenced takeover", mustGet(t, tbl, path, etag), tc.now)

		takeover.Fence = dynamolease.FenceOf(mustGet(t, tbl, path, etag))
		if _, err := tbl.Replace(ctx(t), takeover, 0); err != nil {
			t.Fatalf("%s: a takeover fenced on the row as it is: %v", tc.name, err)
		}
		assertRecord(t, tc.name+": taken-over row", mustGet(t, tbl, path, etag), takeover)
	}
}
