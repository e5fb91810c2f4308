package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// probeCase is one sequential request with the answer S3 gives it.
type probeCase struct {
	name string
	// want lists the statuses S3 answers; the first one is S3's.
	want []int
	// run sets up what the case needs and makes the request; err is a
	// setup failure (the case could not be measured).
	run func(ctx context.Context, s *store) (outcome, error)
}

func (c probeCase) negative() bool { return c.want[0] >= 300 }

type caseClass int

const (
	casePass caseClass = iota
	caseIgnored
	caseRefused
	caseWrong
	caseError
)

type caseResult struct {
	name  string
	want  int
	got   outcome
	err   error
	class caseClass
}

func (r caseResult) String() string {
	if r.err != nil {
		return fmt.Sprintf("%s: %v", r.name, r.err)
	}
	return fmt.Sprintf("%s: want %d, got %s", r.name, r.want, r.got)
}

func runCase(ctx context.Context, s *store, c probeCase) caseResult {
	got, err := c.run(ctx, s)
	r := caseResult{name: c.name, want: c.want[0], got: got, err: err}
	if err == nil && got.err != nil {
		r.err = got.err
	}
	r.class = classify(c, got, r.err)
	return r
}

func classify(c probeCase, got outcome, err error) caseClass {
	switch {
	case err != nil:
		return caseError
	case slices.Contains(c.want, got.status):
		return casePass
	case c.negative() && got.status >= 200 && got.status < 300:
		return caseIgnored
	case refusal(got):
		return caseRefused
	}
	return caseWrong
}

// refusal is how stores say they do not implement a condition.
func refusal(o outcome) bool {
	if o.status == 501 || o.code == "NotImplemented" {
		return true
	}
	return o.status == 400 && (o.code == "InvalidArgument" || o.code == "InvalidRequest")
}

// judge turns the sequential cases into a verdict; ok means every case was
// right, so a race may still find the capability racy.
func judge(results []caseResult, negatives map[string]bool) (res Result, ok bool) {
	var failed []string
	var errs, refused, ignored, wrong, negPass, negTotal int
	for _, r := range results {
		if negatives[r.name] {
			negTotal++
			if r.class == casePass {
				negPass++
			}
		}
		switch r.class {
		case casePass:
			continue
		case caseError:
			errs++
		case caseRefused:
			refused++
		case caseIgnored:
			ignored++
		case caseWrong:
			wrong++
		}
		failed = append(failed, r.String())
	}
	detail := strings.Join(failed, "; ")
	switch {
	case errs > 0:
		return Result{Verdict: Error, Detail: detail}, false
	case len(failed) == 0:
		return Result{Verdict: Native, Detail: fmt.Sprintf("%d sequential cases right", len(results))}, true
	case negPass == 0 && ignored == negTotal:
		return Result{Verdict: Ignored, Detail: detail}, false
	case negPass == 0 && refused > 0:
		return Result{Verdict: Refused, Detail: detail}, false
	}
	return Result{Verdict: Partial, Detail: detail}, false
}

// check is one capability and its sequential cases; raceAll races it.
type check struct {
	name  string
	cases []probeCase
}

// run runs the cases side by side (each writes its own fresh keys): a
// store that keeps a losing writer waiting (SeaweedFS, about a second)
// then costs one wait per check, not one per case. ok means every case was
// right, so the capability is raced next.
func (c check) run(ctx context.Context, s *store) (res Result, ok bool) {
	results := make([]caseResult, len(c.cases))
	negatives := map[string]bool{}
	var wg sync.WaitGroup
	for i, pc := range c.cases {
		negatives[pc.name] = pc.negative()
		wg.Go(func() { results[i] = runCase(ctx, s, pc) })
	}
	wg.Wait()
	res, ok = judge(results, negatives)
	if res.Verdict == Partial {
		// Raced in its remedied form: the remedy stands only if it wins.
		if res.Remedy = remedyFor(c.name, results); res.Remedy != "" {
			return res, true
		}
	}
	return res, ok
}

// runChecks runs every check side by side and returns their verdicts and
// which were right one request at a time.
func runChecks(ctx context.Context, s *store) (map[string]Result, map[string]bool) {
	all := checks()
	results, right := make([]Result, len(all)), make([]bool, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Go(func() { results[i], right[i] = c.run(ctx, s) })
	}
	wg.Wait()
	caps, ok := make(map[string]Result, len(all)), make(map[string]bool, len(all))
	for i, c := range all {
		caps[c.name], ok[c.name] = results[i], right[i]
	}
	return caps, ok
}
