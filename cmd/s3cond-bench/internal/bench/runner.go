package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// RunOptions bound one workload run: it stops after Duration or after Ops
// successful operations, whichever comes first (a zero value is no bound,
// but one of the two must be set).
type RunOptions struct {
	Duration time.Duration
	Ops      int64
	// Grace is how long operations still running at the deadline may take
	// to finish (they count; the elapsed time includes them). Past it they
	// are cancelled. Default 30 s.
	Grace time.Duration
	// Progress receives a line per ProgressEvery (default 1 s) while the
	// workload runs; nil prints nothing.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Keep leaves the workload's objects in the bucket instead of deleting
	// them afterwards.
	Keep bool
	Log  zerolog.Logger
}

func (o RunOptions) validate() error {
	if o.Duration <= 0 && o.Ops <= 0 {
		return errors.New("set a duration or an operation count")
	}
	return nil
}

// RunWorkload prepares w on t, runs it with the given number of workers,
// and deletes what it wrote unless opt.Keep. When t.RSSPID is set it reports
// that process's peak RSS and CPU time over the measured phase.
func RunWorkload(ctx context.Context, t *Target, w Workload, workers int, opt RunOptions) (Result, error) {
	if err := opt.validate(); err != nil {
		return Result{}, err
	}
	if workers < 1 {
		return Result{}, fmt.Errorf("workload %s: workers must be at least 1", w.Name())
	}
	if !opt.Keep {
		defer cleanUp(ctx, t, w, opt.Log)
	}
	if err := w.Prepare(ctx, t, workers); err != nil {
		return Result{}, fmt.Errorf("prepare %s on %s: %w", w.Name(), t.Label, err)
	}
	var cpuBefore time.Duration
	cpuMeasured := false
	if t.RSSPID > 0 {
		if err := ResetPeakRSS(t.RSSPID); err != nil {
			opt.Log.Warn().Err(err).Msg("peak RSS will include the preparation")
		}
		var err error
		if cpuBefore, err = ProcessCPUTime(t.RSSPID); err != nil {
			opt.Log.Warn().Err(err).Msg("CPU time not measured")
		}
		cpuMeasured = err == nil
	}
	result := measure(ctx, t, w, workers, opt)
	if t.RSSPID > 0 {
		peak, err := PeakRSS(t.RSSPID)
		if err != nil {
			opt.Log.Warn().Err(err).Msg("peak RSS not measured")
		}
		result.PeakRSS = peak
		if cpuAfter, err := ProcessCPUTime(t.RSSPID); err == nil && cpuMeasured {
			result.CPU, result.CPUMeasured = cpuAfter-cpuBefore, true
		}
	}
	if err := ctx.Err(); err != nil {
		return result, fmt.Errorf("workload %s on %s interrupted: %w", w.Name(), t.Label, err)
	}
	return result, nil
}

// cleanUp deletes what workload w wrote on t; an interrupted run still
// cleans up, within a bound.
func cleanUp(ctx context.Context, t *Target, w Workload, log zerolog.Logger) {
	cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if err := DeletePrefix(cleanupCtx, t, t.Prefix+w.Name()+"/"); err != nil {
		log.Warn().Err(err).Str("workload", w.Name()).Str("target", t.Label).Msg("clean-up incomplete")
	}
}

// runCounters are the live totals the workers update and the progress line
// reads.
type runCounters struct {
	claimed, ops, errors, bytes, preconditionFailed, conflicts atomic.Int64
}

func measure(ctx context.Context, t *Target, w Workload, workers int, opt RunOptions) Result {
	grace := opt.Grace
	if grace <= 0 {
		grace = 30 * time.Second
	}
	stop := make(chan struct{})
	var stopOnce sync.Once
	closeStop := func() { stopOnce.Do(func() { close(stop) }) }
	opCtx, cancelOps := context.WithCancel(ctx)
	defer cancelOps()
	if opt.Duration > 0 {
		deadline := time.AfterFunc(opt.Duration, closeStop)
		defer deadline.Stop()
		hardStop := time.AfterFunc(opt.Duration+grace, cancelOps)
		defer hardStop.Stop()
	}
	go func() {
		select {
		case <-ctx.Done():
			closeStop()
		case <-stop:
		}
	}()

	var counters runCounters
	perWorker := make([]workerRecord, workers)
	start := time.Now()
	progressDone := startProgress(opt, w.Name(), t.Label, start, &counters)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			perWorker[i] = runWorker(opCtx, t, w, i, stop, opt.Ops, &counters)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	closeStop()
	progressDone()

	result := Result{
		Workload: w.Name(), Target: t.Label, Workers: workers,
		Ops: counters.ops.Load(), Errors: counters.errors.Load(), Bytes: counters.bytes.Load(),
		PreconditionFailed: counters.preconditionFailed.Load(), Conflicts: counters.conflicts.Load(),
		Elapsed: elapsed,
	}
	cancelled := 0
	for _, rec := range perWorker {
		result.samples = append(result.samples, rec.samples...)
		result.ErrorSamples = appendDistinct(result.ErrorSamples, rec.errorSamples...)
		cancelled += rec.cancelled
	}
	if cancelled > 0 {
		opt.Log.Warn().Int("operations", cancelled).Str("workload", w.Name()).
			Msg("operations were cancelled unfinished; they are not counted")
	}
	result.Latency = Summarize(result.samples)
	return result
}

// workerRecord is what one worker keeps to itself, so the hot path takes no
// lock: its latency samples and a few error messages.
type workerRecord struct {
	samples      []time.Duration
	errorSamples []string
	cancelled    int
}

func runWorker(ctx context.Context, t *Target, w Workload, worker int, stop <-chan struct{}, maxOps int64, counters *runCounters) workerRecord {
	var rec workerRecord
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return rec
		default:
		}
		if maxOps > 0 && counters.claimed.Add(1) > maxOps {
			return rec
		}
		begin := time.Now()
		outcome, err := w.Do(ctx, t, Op{Worker: worker, Seq: seq, Stop: stop})
		latency := time.Since(begin)
		counters.preconditionFailed.Add(outcome.PreconditionFailed)
		counters.conflicts.Add(outcome.Conflicts)
		switch {
		case err == nil:
			counters.ops.Add(1)
			counters.bytes.Add(outcome.Bytes)
			rec.samples = append(rec.samples, latency)
		case errors.Is(err, errStopped):
			return rec
		case ctx.Err() != nil:
			// Cancelled by an interrupt or the grace period, not a failure
			// of the endpoint.
			rec.cancelled++
			return rec
		default:
			counters.errors.Add(1)
			if len(rec.errorSamples) < maxErrorSamples {
				rec.errorSamples = appendDistinct(rec.errorSamples, err.Error())
			}
		}
	}
}

// startProgress prints a line every opt.ProgressEvery until the returned
// function is called.
func startProgress(opt RunOptions, workload, target string, start time.Time, counters *runCounters) (stop func()) {
	if opt.Progress == nil {
		return func() {}
	}
	every := opt.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		var lastOps, lastBytes int64
		last := start
		for {
			select {
			case <-done:
				return
			case now := <-ticker.C:
				ops, bytes := counters.ops.Load(), counters.bytes.Load()
				interval := now.Sub(last).Seconds()
				fmt.Fprintf(opt.Progress, "%-12s %-8s %5.0fs  ops %8d  %9.1f ops/s  %8.2f MB/s  errors %d  412 %d  409 %d\n",
					workload, target, now.Sub(start).Seconds(), ops,
					float64(ops-lastOps)/interval, float64(bytes-lastBytes)/bytesPerMB/interval,
					counters.errors.Load(), counters.preconditionFailed.Load(), counters.conflicts.Load())
				lastOps, lastBytes, last = ops, bytes, now
			}
		}
	}()
	return func() { close(done); <-finished }
}
