package bench

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleReport() Report {
	primary := Result{
		Workload: "put-4k", Target: "s3cond", Workers: 4, Ops: 200, Errors: 1,
		ErrorSamples: []string{"boom"}, Bytes: 200 * 4096, Elapsed: 2 * time.Second,
		Latency: LatencySummary{Count: 200, Mean: 12 * time.Millisecond, P50: 12500 * time.Microsecond,
			P90: 20 * time.Millisecond, P99: 30 * time.Millisecond, Max: 40 * time.Millisecond},
	}
	baseline := primary
	baseline.Target, baseline.Ops, baseline.Errors, baseline.ErrorSamples = "direct", 400, 0, nil
	baseline.Bytes = 400 * 4096
	baseline.Latency.P50 = 10 * time.Millisecond
	hot := Result{Workload: "hot-cas", Target: "s3cond", Workers: 8, Ops: 30, PreconditionFailed: 70, Conflicts: 2,
		Elapsed: 3 * time.Second, PeakRSS: 64 << 20, CPU: 1500 * time.Millisecond, CPUMeasured: true}
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	return Report{
		Started: start, Finished: start.Add(time.Minute),
		Settings: Settings{Endpoint: "http://a", Compare: "http://b", Bucket: "bkt",
			Duration: 10 * time.Second, Rounds: 1},
		Results:     []Result{primary, baseline, hot},
		Comparisons: []Comparison{{Workload: "put-4k", Workers: 4, Primary: primary, Baseline: baseline}},
	}
}

func TestReportJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	if err := sampleReport().WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Settings struct {
			Endpoint        string  `json:"endpoint"`
			Compare         string  `json:"compare"`
			DurationSeconds float64 `json:"duration_seconds"`
			Rounds          int     `json:"rounds"`
		} `json:"settings"`
		Results []struct {
			Workload     string   `json:"workload"`
			Target       string   `json:"target"`
			Ops          int64    `json:"ops"`
			Errors       int64    `json:"errors"`
			ErrorSamples []string `json:"error_samples"`
			OpsPerSecond float64  `json:"ops_per_second"`
			MBPerSecond  float64  `json:"mb_per_second"`
			Precondition int64    `json:"precondition_failed_412"`
			Conflicts    int64    `json:"conflicts_409"`
			PeakRSS      int64    `json:"peak_rss_bytes"`
			CPUSeconds   *float64 `json:"cpu_seconds"`
			CPUPerOpUS   *float64 `json:"cpu_per_op_us"`
			Latency      struct {
				P50 float64 `json:"p50"`
				P99 float64 `json:"p99"`
			} `json:"latency_ms"`
		} `json:"results"`
		Comparisons []struct {
			Workload   string  `json:"workload"`
			Primary    string  `json:"primary"`
			Baseline   string  `json:"baseline"`
			OpsRatio   float64 `json:"ops_ratio"`
			AddedP50MS float64 `json:"added_p50_ms"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	if doc.Settings.Endpoint != "http://a" || doc.Settings.Compare != "http://b" || doc.Settings.DurationSeconds != 10 || doc.Settings.Rounds != 1 {
		t.Errorf("settings: %+v", doc.Settings)
	}
	if len(doc.Results) != 3 {
		t.Fatalf("%d results, want 3", len(doc.Results))
	}
	r := doc.Results[0]
	if r.Workload != "put-4k" || r.Target != "s3cond" || r.Ops != 200 || r.Errors != 1 || r.ErrorSamples[0] != "boom" {
		t.Errorf("result 0: %+v", r)
	}
	if r.OpsPerSecond != 100 {
		t.Errorf("ops/s %v, want 100 (200 ops in 2 s)", r.OpsPerSecond)
	}
	if math.Abs(r.MBPerSecond-0.4096) > 1e-9 {
		t.Errorf("MB/s %v, want 0.4096 (819200 bytes in 2 s)", r.MBPerSecond)
	}
	if r.Latency.P50 != 12.5 || r.Latency.P99 != 30 {
		t.Errorf("latency ms %+v, want p50 12.5, p99 30", r.Latency)
	}
	if r.CPUSeconds != nil || r.CPUPerOpUS != nil {
		t.Errorf("put-4k had no CPU measured, yet the JSON says %v s", *r.CPUSeconds)
	}
	hot := doc.Results[2]
	if hot.Precondition != 70 || hot.Conflicts != 2 || hot.PeakRSS != 64<<20 ||
		hot.CPUSeconds == nil || *hot.CPUSeconds != 1.5 || hot.CPUPerOpUS == nil || *hot.CPUPerOpUS != 50000 {
		t.Errorf("hot-cas counters: %+v", hot)
	}
	c := doc.Comparisons[0]
	if c.Primary != "s3cond" || c.Baseline != "direct" || c.OpsRatio != 0.5 || c.AddedP50MS != 2.5 {
		t.Errorf("comparison: %+v; want ratio 0.5 and +2.5 ms", c)
	}
}

func TestMergeAddsRoundsAndRecomputesLatency(t *testing.T) {
	a := Result{Workload: "get-4k", Target: "x", Ops: 2, Bytes: 8, Elapsed: time.Second,
		ErrorSamples: []string{"e1"}, samples: []time.Duration{1, 3}}
	b := Result{Workload: "get-4k", Target: "x", Ops: 2, Errors: 2, Bytes: 8, Elapsed: time.Second,
		ErrorSamples: []string{"e1", "e2"}, PeakRSS: 5, CPU: 3 * time.Millisecond, CPUMeasured: true, samples: []time.Duration{2, 4}}
	a.CPU = time.Millisecond
	m := a.merge(b)
	if m.Ops != 4 || m.Errors != 2 || m.Bytes != 16 || m.Elapsed != 2*time.Second || m.PeakRSS != 5 ||
		m.CPU != 4*time.Millisecond || !m.CPUMeasured || m.CPUPerOp() != time.Millisecond {
		t.Errorf("merged totals: %+v", m)
	}
	if m.OpsPerSecond() != 2 {
		t.Errorf("merged ops/s %v, want 2", m.OpsPerSecond())
	}
	if m.Latency.Count != 4 || m.Latency.P50 != 2 || m.Latency.Max != 4 {
		t.Errorf("merged latency %+v", m.Latency)
	}
	if strings.Join(m.ErrorSamples, ",") != "e1,e2" {
		t.Errorf("error samples %v, want e1,e2 once each", m.ErrorSamples)
	}
}

func TestMarkdownTables(t *testing.T) {
	md := Markdown(sampleReport())
	for _, want := range []string{
		"| workload | workers | direct ops/s | via s3cond ops/s | ratio | p50 direct | p50 s3cond | added p50 |",
		"| put-4k | 4 | 200.0 | 100.0 | 0.50 | 10.00 ms | 12.50 ms | +2.50 ms |",
		"| hot-cas | s3cond | 8 | 30 | 10.0 | 70 | 2 |",
		"| hot-cas | s3cond | 8 | 0 MiB | 0.0 | 64 MiB | 50.0 ms |",
		"put-4k on s3cond: 1 failed operations, e.g. `boom`.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestTextReportListsEveryResultAndComparison(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"direct ops/s", "+2.50 ms", "hot-cas", "64 MiB", "50.0 ms", "error put-4k on s3cond: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}
