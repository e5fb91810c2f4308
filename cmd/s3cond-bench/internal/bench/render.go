package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

func formatMS(d time.Duration) string { return fmt.Sprintf("%.2f ms", milliseconds(d)) }

func formatAddedMS(d time.Duration) string { return fmt.Sprintf("%+.2f ms", milliseconds(d)) }

// formatRatio shows "-" for workloads that move no payload (list).
func formatRatio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

func formatMiB(bytes int64) string { return fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20)) }

// WriteText prints the report as aligned plain-text tables.
func WriteText(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\ttarget\tworkers\tops\terrors\tops/s\tMB/s\tp50\tp90\tp99\t412\t409\tpeak RSS\tCPU/op\t")
	for _, res := range r.Results {
		rss := "-"
		if res.PeakRSS > 0 {
			rss = formatMiB(res.PeakRSS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f\t%.2f\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n",
			res.Workload, res.Target, res.Workers, res.Ops, res.Errors,
			res.OpsPerSecond(), res.MBPerSecond(),
			formatMS(res.Latency.P50), formatMS(res.Latency.P90), formatMS(res.Latency.P99),
			res.PreconditionFailed, res.Conflicts, rss, formatCPUPerOp(res))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if len(r.Comparisons) > 0 {
		first := r.Comparisons[0]
		primary, baseline := first.Primary.Target, first.Baseline.Target
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "workload\tworkers\t%s ops/s\t%s ops/s\tratio\tMB/s ratio\tp50 %s\tp50 %s\tadded p50\t\n",
			baseline, primary, baseline, primary)
		for _, c := range r.Comparisons {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.2f\t%s\t%s\t%s\t%s\t\n",
				c.Workload, c.Workers, c.Baseline.OpsPerSecond(), c.Primary.OpsPerSecond(),
				c.OpsRatio(), formatRatio(c.MBRatio()), formatMS(c.Baseline.Latency.P50), formatMS(c.Primary.Latency.P50),
				formatAddedMS(c.AddedP50()))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
	}
	for _, res := range r.Results {
		for _, msg := range res.ErrorSamples {
			if _, err := fmt.Fprintf(w, "error %s on %s: %s\n", res.Workload, res.Target, msg); err != nil {
				return fmt.Errorf("write results: %w", err)
			}
		}
	}
	return nil
}

// Markdown renders the report as Markdown tables: the comparison when there
// is one (else the plain results), then conflict counts and peak memory
// where the run measured them, then any errors.
func Markdown(r Report) string {
	var b strings.Builder
	if len(r.Comparisons) > 0 {
		first := r.Comparisons[0]
		primary, baseline := first.Primary.Target, first.Baseline.Target
		fmt.Fprintf(&b, "| workload | workers | %s ops/s | via %s ops/s | ratio | p50 %s | p50 %s | added p50 |\n",
			baseline, primary, baseline, primary)
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range r.Comparisons {
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.2f | %s | %s | %s |\n",
				c.Workload, c.Workers, c.Baseline.OpsPerSecond(), c.Primary.OpsPerSecond(), c.OpsRatio(),
				formatMS(c.Baseline.Latency.P50), formatMS(c.Primary.Latency.P50), formatAddedMS(c.AddedP50()))
		}
	} else {
		b.WriteString("| workload | target | workers | ops/s | MB/s | p50 | p90 | p99 |\n")
		b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|\n")
		for _, res := range r.Results {
			fmt.Fprintf(&b, "| %s | %s | %d | %.1f | %.2f | %s | %s | %s |\n",
				res.Workload, res.Target, res.Workers, res.OpsPerSecond(), res.MBPerSecond(),
				formatMS(res.Latency.P50), formatMS(res.Latency.P90), formatMS(res.Latency.P99))
		}
	}
	writeMarkdownConflicts(&b, r.Results)
	writeMarkdownRSS(&b, r.Results)
	writeMarkdownErrors(&b, r.Results)
	return b.String()
}

func writeMarkdownConflicts(b *strings.Builder, results []Result) {
	header := false
	for _, res := range results {
		if res.PreconditionFailed == 0 && res.Conflicts == 0 {
			continue
		}
		if !header {
			b.WriteString("\n412 and 409 answers that the conditional workloads retried or counted:\n\n")
			b.WriteString("| workload | target | workers | commits | commits/s | 412 | 409 |\n|---|---|--:|--:|--:|--:|--:|\n")
			header = true
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %.1f | %d | %d |\n", res.Workload, res.Target, res.Workers,
			res.Ops, res.OpsPerSecond(), res.PreconditionFailed, res.Conflicts)
	}
}

func writeMarkdownRSS(b *strings.Builder, results []Result) {
	header := false
	for _, res := range results {
		if res.PeakRSS == 0 {
			continue
		}
		if !header {
			b.WriteString("\nPeak resident memory and CPU time of the measured process during each workload:\n\n")
			b.WriteString("| workload | target | workers | bytes moved | MB/s | peak RSS | CPU per op |\n|---|---|--:|--:|--:|--:|--:|\n")
			header = true
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %.1f | %s | %s |\n", res.Workload, res.Target, res.Workers,
			formatMiB(res.Bytes), res.MBPerSecond(), formatMiB(res.PeakRSS), formatCPUPerOp(res))
	}
}

// formatCPUPerOp shows the measured process's CPU time per operation, or
// "-" when it was not measured.
func formatCPUPerOp(res Result) string {
	if !res.CPUMeasured || res.Ops == 0 {
		return "-"
	}
	perOp := res.CPUPerOp()
	if perOp >= 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(perOp)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(perOp)/float64(time.Microsecond))
}

func writeMarkdownErrors(b *strings.Builder, results []Result) {
	for _, res := range results {
		if res.Errors == 0 {
			continue
		}
		fmt.Fprintf(b, "\n%s on %s: %d failed operations", res.Workload, res.Target, res.Errors)
		if len(res.ErrorSamples) > 0 {
			fmt.Fprintf(b, ", e.g. `%s`", strings.ReplaceAll(res.ErrorSamples[0], "`", "'"))
		}
		b.WriteString(".\n")
	}
}
