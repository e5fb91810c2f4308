package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Result is what one workload did against one target.
type Result struct {
	Workload           string
	Target             string
	Workers            int
	Ops                int64 // successful operations (for hot-cas: commits)
	Errors             int64
	ErrorSamples       []string // the first few distinct error messages
	PreconditionFailed int64    // 412 answers counted by the workload
	Conflicts          int64    // 409 answers counted by the workload
	Bytes              int64
	Elapsed            time.Duration
	Latency            LatencySummary
	PeakRSS            int64         // bytes; 0 when not measured
	CPU                time.Duration // the measured process's CPU time, if CPUMeasured
	CPUMeasured        bool

	samples []time.Duration // kept so that rounds can be merged
}

// bytesPerMB: throughput is reported in decimal megabytes, as network and
// disk figures usually are.
const bytesPerMB = 1e6

// OpsPerSecond is successful operations per second of wall time.
func (r Result) OpsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// MBPerSecond is payload megabytes (10^6 bytes) moved per second.
func (r Result) MBPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / bytesPerMB / r.Elapsed.Seconds()
}

// CPUPerOp is the measured process's CPU time per successful operation; 0
// when not measured (see CPUMeasured).
func (r Result) CPUPerOp() time.Duration {
	if r.Ops == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Ops)
}

// merge adds another round of the same workload on the same target.
func (r Result) merge(other Result) Result {
	r.Ops += other.Ops
	r.Errors += other.Errors
	r.ErrorSamples = appendDistinct(r.ErrorSamples, other.ErrorSamples...)
	r.PreconditionFailed += other.PreconditionFailed
	r.Conflicts += other.Conflicts
	r.Bytes += other.Bytes
	r.Elapsed += other.Elapsed
	r.PeakRSS = max(r.PeakRSS, other.PeakRSS)
	r.CPU += other.CPU
	r.CPUMeasured = r.CPUMeasured || other.CPUMeasured
	r.samples = append(r.samples, other.samples...)
	r.Latency = Summarize(r.samples)
	return r
}

const maxErrorSamples = 5

func appendDistinct(samples []string, more ...string) []string {
	for _, s := range more {
		if len(samples) >= maxErrorSamples {
			break
		}
		seen := false
		for _, existing := range samples {
			seen = seen || existing == s
		}
		if !seen {
			samples = append(samples, s)
		}
	}
	return samples
}

// Comparison sets a workload's result through s3cond against the same
// workload sent to the backend directly.
type Comparison struct {
	Workload string
	Workers  int
	Primary  Result // via s3cond
	Baseline Result // direct
}

// OpsRatio is primary ops/s divided by baseline ops/s (1 = no overhead).
func (c Comparison) OpsRatio() float64 {
	return ratio(c.Primary.OpsPerSecond(), c.Baseline.OpsPerSecond())
}

// MBRatio is primary MB/s divided by baseline MB/s.
func (c Comparison) MBRatio() float64 {
	return ratio(c.Primary.MBPerSecond(), c.Baseline.MBPerSecond())
}

// AddedP50 is how much the primary's median latency exceeds the baseline's.
func (c Comparison) AddedP50() time.Duration { return c.Primary.Latency.P50 - c.Baseline.Latency.P50 }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Report is a whole benchmark run.
type Report struct {
	Started     time.Time
	Finished    time.Time
	Settings    Settings
	Results     []Result
	Comparisons []Comparison
}

// Settings records how the run was configured, for the JSON file.
type Settings struct {
	Endpoint string        `json:"endpoint"`
	Compare  string        `json:"compare,omitempty"`
	Bucket   string        `json:"bucket"`
	Duration time.Duration `json:"-"`
	Ops      int64         `json:"ops,omitempty"`
	Rounds   int           `json:"rounds"`
}

// TotalErrors adds up the failed operations of every result.
func (r Report) TotalErrors() int64 {
	var n int64
	for _, res := range r.Results {
		n += res.Errors
	}
	return n
}

// The JSON shapes: times in milliseconds and rates precomputed, so that
// scripts reading the file need no unit conversions.
type (
	reportJSON struct {
		Started     time.Time        `json:"started"`
		Finished    time.Time        `json:"finished"`
		Settings    settingsJSON     `json:"settings"`
		Results     []resultJSON     `json:"results"`
		Comparisons []comparisonJSON `json:"comparisons,omitempty"`
	}
	settingsJSON struct {
		Settings
		DurationSeconds float64 `json:"duration_seconds,omitempty"`
	}
	resultJSON struct {
		Workload           string      `json:"workload"`
		Target             string      `json:"target"`
		Workers            int         `json:"workers"`
		Ops                int64       `json:"ops"`
		Errors             int64       `json:"errors"`
		ErrorSamples       []string    `json:"error_samples,omitempty"`
		PreconditionFailed int64       `json:"precondition_failed_412"`
		Conflicts          int64       `json:"conflicts_409"`
		Bytes              int64       `json:"bytes"`
		ElapsedSeconds     float64     `json:"elapsed_seconds"`
		OpsPerSecond       float64     `json:"ops_per_second"`
		MBPerSecond        float64     `json:"mb_per_second"`
		LatencyMS          latencyJSON `json:"latency_ms"`
		PeakRSSBytes       int64       `json:"peak_rss_bytes,omitempty"`
		CPUSeconds         *float64    `json:"cpu_seconds,omitempty"`
		CPUPerOpUS         *float64    `json:"cpu_per_op_us,omitempty"`
	}
	latencyJSON struct {
		Count int     `json:"count"`
		Mean  float64 `json:"mean"`
		P50   float64 `json:"p50"`
		P90   float64 `json:"p90"`
		P99   float64 `json:"p99"`
		Max   float64 `json:"max"`
	}
	comparisonJSON struct {
		Workload        string  `json:"workload"`
		Workers         int     `json:"workers"`
		Primary         string  `json:"primary"`
		Baseline        string  `json:"baseline"`
		OpsRatio        float64 `json:"ops_ratio"`
		MBRatio         float64 `json:"mb_ratio"`
		AddedP50MS      float64 `json:"added_p50_ms"`
		PrimaryP50MS    float64 `json:"primary_p50_ms"`
		BaselineP50MS   float64 `json:"baseline_p50_ms"`
		PrimaryOpsPerS  float64 `json:"primary_ops_per_second"`
		BaselineOpsPerS float64 `json:"baseline_ops_per_second"`
	}
)

func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MarshalJSON writes the report in the documented file format.
func (r Report) MarshalJSON() ([]byte, error) {
	out := reportJSON{
		Started:  r.Started,
		Finished: r.Finished,
		Settings: settingsJSON{Settings: r.Settings, DurationSeconds: r.Settings.Duration.Seconds()},
		Results:  make([]resultJSON, 0, len(r.Results)),
	}
	for _, res := range r.Results {
		out.Results = append(out.Results, resultJSON{
			Workload: res.Workload, Target: res.Target, Workers: res.Workers,
			Ops: res.Ops, Errors: res.Errors, ErrorSamples: res.ErrorSamples,
			PreconditionFailed: res.PreconditionFailed, Conflicts: res.Conflicts,
			Bytes: res.Bytes, ElapsedSeconds: res.Elapsed.Seconds(),
			OpsPerSecond: res.OpsPerSecond(), MBPerSecond: res.MBPerSecond(),
			LatencyMS: latencyJSON{
				Count: res.Latency.Count, Mean: milliseconds(res.Latency.Mean),
				P50: milliseconds(res.Latency.P50), P90: milliseconds(res.Latency.P90),
				P99: milliseconds(res.Latency.P99), Max: milliseconds(res.Latency.Max),
			},
			PeakRSSBytes: res.PeakRSS,
		})
		if res.CPUMeasured {
			seconds, perOpUS := res.CPU.Seconds(), float64(res.CPUPerOp())/float64(time.Microsecond)
			last := &out.Results[len(out.Results)-1]
			last.CPUSeconds, last.CPUPerOpUS = &seconds, &perOpUS
		}
	}
	for _, c := range r.Comparisons {
		out.Comparisons = append(out.Comparisons, comparisonJSON{
			Workload: c.Workload, Workers: c.Workers,
			Primary: c.Primary.Target, Baseline: c.Baseline.Target,
			OpsRatio: c.OpsRatio(), MBRatio: c.MBRatio(), AddedP50MS: milliseconds(c.AddedP50()),
			PrimaryP50MS: milliseconds(c.Primary.Latency.P50), BaselineP50MS: milliseconds(c.Baseline.Latency.P50),
			PrimaryOpsPerS: c.Primary.OpsPerSecond(), BaselineOpsPerS: c.Baseline.OpsPerSecond(),
		})
	}
	return json.Marshal(out)
}

// WriteJSON writes the report to path, indented.
func (r Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}
