package bench

import (
	"math"
	"slices"
	"time"
)

// LatencySummary is the distribution of one workload's operation latencies.
type LatencySummary struct {
	Count int           `json:"count"`
	Mean  time.Duration `json:"-"`
	P50   time.Duration `json:"-"`
	P90   time.Duration `json:"-"`
	P99   time.Duration `json:"-"`
	Max   time.Duration `json:"-"`
}

// Percentile returns the nearest-rank percentile p (0 < p <= 100) of sorted,
// which must be in ascending order: the smallest sample such that at least
// p% of all samples are at or below it. Nearest rank never invents a value
// that was not measured, unlike interpolation. Empty input gives 0.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Summarize sorts samples in place and returns their distribution.
func Summarize(samples []time.Duration) LatencySummary {
	if len(samples) == 0 {
		return LatencySummary{}
	}
	slices.Sort(samples)
	var total time.Duration
	for _, s := range samples {
		total += s
	}
	return LatencySummary{
		Count: len(samples),
		Mean:  total / time.Duration(len(samples)),
		P50:   Percentile(samples, 50),
		P90:   Percentile(samples, 90),
		P99:   Percentile(samples, 99),
		Max:   samples[len(samples)-1],
	}
}
