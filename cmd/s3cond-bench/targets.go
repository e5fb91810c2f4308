package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
)

// targetsSubcommand checks a bench.sh run against the performance targets
// (docs/performance.md): it reads the JSON reports of the s3cond and nginx
// runs and the output of the forwarding micro-benchmarks, and prints one
// markdown table row per target with its measured value.
const targetsSubcommand = "targets"

type targetsConfig struct {
	suite, anchor, allocs string
}

// benchFile is the part of a report's JSON file the targets read.
type benchFile struct {
	Results []struct {
		Workload     string   `json:"workload"`
		Target       string   `json:"target"`
		Workers      int      `json:"workers"`
		OpsPerSecond float64  `json:"ops_per_second"`
		CPUPerOpUS   *float64 `json:"cpu_per_op_us"`
	} `json:"results"`
	Comparisons []struct {
		Workload string  `json:"workload"`
		Workers  int     `json:"workers"`
		OpsRatio float64 `json:"ops_ratio"`
	} `json:"comparisons"`
}

func readBenchFile(path string) (benchFile, error) {
	var f benchFile
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("read report: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("decode report %s: %w", path, err)
	}
	return f, nil
}

// ratio is the ops ratio against direct of workload@workers, if measured.
func (f benchFile) ratio(workload string, workers int) (float64, bool) {
	for _, c := range f.Comparisons {
		if c.Workload == workload && c.Workers == workers {
			return c.OpsRatio, true
		}
	}
	return 0, false
}

// result finds label's result of workload@workers.
func (f benchFile) result(label, workload string, workers int) (opsPerSecond, cpuPerOpUS float64, ok bool) {
	for _, r := range f.Results {
		if r.Target == label && r.Workload == workload && r.Workers == workers {
			cpu := 0.0
			if r.CPUPerOpUS != nil {
				cpu = *r.CPUPerOpUS
			}
			return r.OpsPerSecond, cpu, true
		}
	}
	return 0, 0, false
}

// allocsLine matches a `go test -benchmem` line: name, iterations, ns/op,
// then B/op and allocs/op.
var allocsLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+.*?(\d+) allocs/op`)

// readAllocs maps benchmark names (without the -GOMAXPROCS suffix) to
// their allocations per operation.
func readAllocs(r io.Reader) (map[string]int, error) {
	allocs := map[string]int{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := allocsLine.FindStringSubmatch(sc.Text()); m != nil {
			n, err := strconv.Atoi(m[3])
			if err != nil {
				return nil, fmt.Errorf("allocs/op of %s: %w", m[1], err)
			}
			allocs[m[1]] = n
		}
	}
	return allocs, sc.Err()
}

// targetRow is one line of the targets table.
type targetRow struct {
	target, want, measured string
	met                    bool
	known                  bool
}

func (r targetRow) markdown() string {
	verdict := "no"
	switch {
	case !r.known:
		verdict = "not measured"
	case r.met:
		verdict = "yes"
	}
	return fmt.Sprintf("| %s | %s | %s | %s |", r.target, r.want, r.measured, verdict)
}

// evaluateTargets computes every target's row from the two reports (s3cond
// labelled "s3cond", nginx "nginx") and the micro-benchmarks' allocations.
func evaluateTargets(suite, anchor benchFile, allocs map[string]int) []targetRow {
	var rows []targetRow
	for _, w := range []string{"get-4k", "put-4k"} {
		_, own, ok1 := suite.result("s3cond", w, 16)
		_, ng, ok2 := anchor.result("nginx", w, 16)
		row := targetRow{target: "CPU per op, " + w + ", 16 workers", want: "s3cond ≤ 1.5 × nginx", known: ok1 && ok2 && own > 0 && ng > 0}
		if row.known {
			row.measured = fmt.Sprintf("%.0f µs vs %.0f µs (%.2f×)", own, ng, own/ng)
			row.met = own <= 1.5*ng
		}
		rows = append(rows, row)
	}
	for _, wl := range []struct {
		name    string
		workers int
	}{{"get-4k", 16}, {"put-4k", 16}, {"get-64m", 4}, {"put-64m", 4}} {
		own, ok1 := suite.ratio(wl.name, wl.workers)
		ng, ok2 := anchor.ratio(wl.name, wl.workers)
		row := targetRow{target: fmt.Sprintf("throughput vs direct, %s, %d workers", wl.name, wl.workers),
			want: "s3cond ≥ nginx − 0.03", known: ok1 && ok2}
		if row.known {
			row.measured = fmt.Sprintf("%.2f vs %.2f", own, ng)
			row.met = own >= ng-0.03
		}
		rows = append(rows, row)
	}
	for _, b := range []struct {
		name  string
		limit int
	}{{"BenchmarkForwardGet4KiB", 40}, {"BenchmarkForwardPut4KiB", 60}} {
		n, ok := allocs[b.name]
		row := targetRow{target: "allocations, " + b.name, want: fmt.Sprintf("≤ %d per request", b.limit), known: ok}
		if ok {
			row.measured = strconv.Itoa(n)
			row.met = n <= b.limit
		}
		rows = append(rows, row)
	}
	create, _, ok1 := suite.result("s3cond", "cond-create", 16)
	put, _, ok2 := suite.result("s3cond", "put-4k", 16)
	row := targetRow{target: "conditional create ÷ PUT, both through s3cond, 16 workers", want: "≥ 0.6", known: ok1 && ok2 && put > 0}
	if row.known {
		row.measured = fmt.Sprintf("%.0f ÷ %.0f = %.2f", create, put, create/put)
		row.met = create/put >= 0.6
	}
	rows = append(rows, row)
	hot, _, ok := suite.result("s3cond", "hot-cas", 8)
	row = targetRow{target: "hot key, 8 CAS writers", want: "≥ 150 commits/s", known: ok}
	if ok {
		row.measured = fmt.Sprintf("%.1f commits/s", hot)
		row.met = hot >= 150
	}
	return append(rows, row)
}

func parseTargetsFlags(args []string) (targetsConfig, error) {
	fs := flag.NewFlagSet("s3cond-bench targets", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg targetsConfig
	fs.StringVar(&cfg.suite, "suite", "", "JSON report of the run through s3cond (label s3cond)")
	fs.StringVar(&cfg.anchor, "anchor", "", "JSON report of the run through nginx (label nginx)")
	fs.StringVar(&cfg.allocs, "allocs", "", "output of go test -bench BenchmarkForward -benchmem ./proxy")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, errHelp
		}
		return cfg, err
	}
	if cfg.suite == "" || cfg.anchor == "" || cfg.allocs == "" {
		return cfg, errors.New("targets needs --suite, --anchor and --allocs")
	}
	return cfg, nil
}

// mainTargets runs the targets subcommand and returns the exit status.
func mainTargets(args []string, out io.Writer) int {
	cfg, err := parseTargetsFlags(args)
	if errors.Is(err, errHelp) {
		return 0
	}
	if err == nil {
		err = writeTargets(cfg, out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "s3cond-bench targets:", err)
		return exitUsage
	}
	return 0
}

func writeTargets(cfg targetsConfig, out io.Writer) error {
	suite, err := readBenchFile(cfg.suite)
	if err != nil {
		return err
	}
	anchor, err := readBenchFile(cfg.anchor)
	if err != nil {
		return err
	}
	f, err := os.Open(cfg.allocs)
	if err != nil {
		return fmt.Errorf("read micro-benchmark output: %w", err)
	}
	defer f.Close()
	allocs, err := readAllocs(f)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "| target | want | measured | met |")
	fmt.Fprintln(out, "|---|---|--:|---|")
	for _, row := range evaluateTargets(suite, anchor, allocs) {
		fmt.Fprintln(out, row.markdown())
	}
	return nil
}
