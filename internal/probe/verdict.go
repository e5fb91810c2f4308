package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// run runs the cases; ok means every one was right, so the capability is
// raced next.
func (c check) run(ctx context.Context, s *store) (res Result, ok bool) {
	results := make([]caseResult, 0, len(c.cases))
	negatives := map[string]bool{}
	for _, pc := range c.cases {
		negatives[pc.name] = pc.negative()
		results = append(results, runCase(ctx, s, pc))
	}
	return judge(results, negatives)
}
