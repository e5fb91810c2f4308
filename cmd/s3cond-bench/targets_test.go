package main

import (
	"strings"
	"testing"
)

func TestReadAllocsParsesBenchmem(t *testing.T) {
	out := `goos: linux
BenchmarkForwardGet4KiB-2   	   10000	    101342 ns/op	   40.42 MB/s	   12345 B/op	     187 allocs/op
BenchmarkForwardPut4KiB   	   10000	    121342 ns/op	   22345 B/op	     222 allocs/op
PASS`
	allocs, err := readAllocs(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if allocs["BenchmarkForwardGet4KiB"] != 187 || allocs["BenchmarkForwardPut4KiB"] != 222 {
		t.Fatalf("allocs = %v", allocs)
	}
}

func cpu(v float64) *float64 { return &v }

func TestEvaluateTargetsJudgesEachAgainstItsLimit(t *testing.T) {
	var suite, anchor benchFile
	type result = struct {
		Workload     string   `json:"workload"`
		Target       string   `json:"target"`
		Workers      int      `json:"workers"`
		OpsPerSecond float64  `json:"ops_per_second"`
		CPUPerOpUS   *float64 `json:"cpu_per_op_us"`
	}
	type comparison = struct {
		Workload string  `json:"workload"`
		Workers  int     `json:"workers"`
		OpsRatio float64 `json:"ops_ratio"`
	}
	suite.Results = []result{
		{Workload: "get-4k", Target: "s3cond", Workers: 16, OpsPerSecond: 2000, CPUPerOpUS: cpu(100)},
		{Workload: "put-4k", Target: "s3cond", Workers: 16, OpsPerSecond: 1000, CPUPerOpUS: cpu(200)},
		{Workload: "cond-create", Target: "s3cond", Workers: 16, OpsPerSecond: 650},
		{Workload: "hot-cas", Target: "s3cond", Workers: 8, OpsPerSecond: 120},
	}
	suite.Comparisons = []comparison{{"get-4k", 16, 0.80}, {"put-4k", 16, 0.70}}
	anchor.Results = []result{
		{Workload: "get-4k", Target: "nginx", Workers: 16, CPUPerOpUS: cpu(70)},
		{Workload: "put-4k", Target: "nginx", Workers: 16, CPUPerOpUS: cpu(100)},
	}
	anchor.Comparisons = []comparison{{"get-4k", 16, 0.82}, {"put-4k", 16, 0.80}}
	rows := evaluateTargets(suite, anchor, map[string]int{"BenchmarkForwardGet4KiB": 40, "BenchmarkForwardPut4KiB": 61})
	got := map[string]string{}
	for _, r := range rows {
		got[r.target] = strings.TrimSpace(r.markdown()[strings.LastIndex(r.markdown()[:len(r.markdown())-1], "|")+1 : len(r.markdown())-1])
	}
	want := map[string]string{
		"CPU per op, get-4k, 16 workers":                            "yes", // 100 ≤ 105
		"CPU per op, put-4k, 16 workers":                            "no",  // 200 > 150
		"throughput vs direct, get-4k, 16 workers":                  "yes", // 0.80 ≥ 0.79
		"throughput vs direct, put-4k, 16 workers":                  "no",
		"throughput vs direct, get-64m, 4 workers":                  "not measured",
		"allocations, BenchmarkForwardGet4KiB":                      "yes",
		"allocations, BenchmarkForwardPut4KiB":                      "no",
		"conditional create ÷ PUT, both through s3cond, 16 workers": "yes",
		"hot key, 8 CAS writers":                                    "no",
	}
	for target, verdict := range want {
		if got[target] != verdict {
			t.Errorf("%s: %q, want %q", target, got[target], verdict)
		}
	}
}
