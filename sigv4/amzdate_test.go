package sigv4

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAmzDateCacheAnswersAsTimeParse: the remembered date never stands in
// for another value, and a malformed value is refused after a good one was
// remembered (and is not remembered itself).
func TestAmzDateCacheAnswersAsTimeParse(t *testing.T) {
	var cache amzDateCache
	for _, raw := range []string{
		"20261207T035959Z", "20261207T035959Z", "20261207T040000Z",
		"20261207T04000Z", "20261207T040000Z", "20261232T040000Z", "20261208T000000Z", "",
	} {
		want, wantErr := time.Parse(amzDateLayout, raw)
		got, err := cache.parse(raw)
		if (err != nil) != (wantErr != nil) || !got.Equal(want) {
			t.Fatalf("parse(%q) = %v, %v; time.Parse gives %v, %v", raw, got, err, want, wantErr)
		}
		if last := cache.last.Load(); err == nil && last.raw != raw {
			t.Fatalf("parse(%q) left %q remembered", raw, last.raw)
		}
	}
}

// TestAmzDateFormatsAsTime holds the digit-by-digit formatting to time's,
// in and out of UTC, across the years time formats with four digits and
// beyond them.
func TestAmzDateFormatsAsTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 7))
	zone := time.FixedZone("east", 5*3600+1800)
	for i := range 20000 {
		sec := rng.Int64N(400*365*86400) - 10*365*86400 // 1960 to 2360
		if i%100 == 0 {
			sec = rng.Int64() >> 20 // far years too
		}
		when := time.Unix(sec, 0).In(zone)
		if got, want := string(appendAmzDate(nil, when)), when.UTC().Format(amzDateLayout); got != want {
			t.Fatalf("appendAmzDate(%v) = %q, want %q", when, got, want)
		}
		if got, want := string(appendScopeDay(nil, when)), when.UTC().Format(scopeDateLayout); got != want {
			t.Fatalf("appendScopeDay(%v) = %q, want %q", when, got, want)
		}
	}
}
