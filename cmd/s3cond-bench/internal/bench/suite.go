package bench

import (
	"context"
	"fmt"
	"time"
)

// SuiteOptions describe a whole benchmark run.
type SuiteOptions struct {
	Plan []Planned
	// Targets holds one endpoint, or two to compare: Targets[0] is the one
	// under test (s3cond), Targets[1] the baseline (the backend directly).
	Targets []*Target
	// Rounds repeats the whole plan; results of a workload on a target are
	// merged over the rounds. Default 1.
	Rounds   int
	Run      RunOptions
	Settings Settings
}

// RunSuite runs every planned workload on every target. With two targets it
// alternates which goes first from one workload (and round) to the next, so
// that neither side always runs on a cold or a warm backend.
func RunSuite(ctx context.Context, opt SuiteOptions) (Report, error) {
	if len(opt.Targets) == 0 || len(opt.Targets) > 2 {
		return Report{}, fmt.Errorf("want one or two targets, got %d", len(opt.Targets))
	}
	rounds := max(opt.Rounds, 1)
	report := Report{Started: time.Now(), Settings: opt.Settings}
	report.Settings.Rounds = rounds
	// merged[i][j] is workload i on target j.
	merged := make([][]Result, len(opt.Plan))
	for i := range merged {
		merged[i] = make([]Result, len(opt.Targets))
	}
	seen := make([][]bool, len(opt.Plan))
	for i := range seen {
		seen[i] = make([]bool, len(opt.Targets))
	}
	for round := range rounds {
		for i, planned := range opt.Plan {
			for _, j := range targetOrder(len(opt.Targets), round+i) {
				res, err := RunWorkload(ctx, opt.Targets[j], planned.Workload, planned.Workers, opt.Run)
				if err != nil {
					report.Finished = time.Now()
					report.Results, report.Comparisons = collect(merged, seen)
					return report, err
				}
				if seen[i][j] {
					merged[i][j] = merged[i][j].merge(res)
				} else {
					merged[i][j], seen[i][j] = res, true
				}
			}
		}
	}
	report.Finished = time.Now()
	report.Results, report.Comparisons = collect(merged, seen)
	return report, nil
}

// targetOrder lists target indexes, reversed on odd turns.
func targetOrder(targets, turn int) []int {
	if targets == 2 && turn%2 == 1 {
		return []int{1, 0}
	}
	order := make([]int, targets)
	for i := range order {
		order[i] = i
	}
	return order
}

func collect(merged [][]Result, seen [][]bool) ([]Result, []Comparison) {
	var results []Result
	var comparisons []Comparison
	for i := range merged {
		for j := range merged[i] {
			if seen[i][j] {
				results = append(results, merged[i][j])
			}
		}
		if len(merged[i]) == 2 && seen[i][0] && seen[i][1] {
			comparisons = append(comparisons, Comparison{
				Workload: merged[i][0].Workload, Workers: merged[i][0].Workers,
				Primary: merged[i][0], Baseline: merged[i][1],
			})
		}
	}
	return results, comparisons
}
