package bench

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	three := []time.Duration{10, 20, 30}
	cases := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"p50 of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p90 of 1..100", hundred, 90, 90 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 of 1..100", hundred, 100, 100 * time.Millisecond},
		{"p99.9 of 1..100 rounds up", hundred, 99.9, 100 * time.Millisecond},
		{"p50 of three is the middle", three, 50, 20},
		{"p90 of three is the top", three, 90, 30},
		{"p10 of three is the bottom", three, 10, 10},
		{"p0 is the minimum", three, 0, 10},
		{"single sample", []time.Duration{7}, 99, 7},
		{"no samples", nil, 50, 0},
	}
	for _, c := range cases {
		if got := Percentile(c.samples, c.p); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSummarizeSortsAndAggregates(t *testing.T) {
	samples := []time.Duration{40, 10, 30, 20}
	s := Summarize(samples)
	want := LatencySummary{Count: 4, Mean: 25, P50: 20, P90: 40, P99: 40, Max: 40}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	if samples[0] != 10 || samples[3] != 40 {
		t.Errorf("samples not sorted in place: %v", samples)
	}
	if (Summarize(nil) != LatencySummary{}) {
		t.Error("empty input: want a zero summary")
	}
}
