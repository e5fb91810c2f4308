package probe

import (
	"context"
	"strings"
	"sync"
)

// raceSpecs is every race the probe runs: each conditional write against
// every conditional write it can meet on one key. Creates (If-None-Match: *)
// meet creates; writes on a version (If-Match, and the deletes) meet
// writes on that version. A create does not meet a delete: a delete then a
// create both succeed in S3 too.
func raceSpecs(caps map[string]Result) []raceSpec {
	putCreate, putCAS := putRacer(false, ""), putRacer(true, caps[PutIfMatch].Remedy)
	copyCreate, copyCAS := copyRacer(false), copyRacer(true)
	completeCreate, completeCAS := completeRacer(false), completeRacer(true)
	del, delEntry := deleteRacer(), deleteEntryRacer()
	return []raceSpec{
		{putCreate, putCreate},
		{putCAS, putCAS},
		{completeCreate, completeCreate},
		{completeCreate, putCreate},
		{completeCAS, completeCAS},
		{completeCAS, putCAS},
		{copyCreate, copyCreate},
		{copyCreate, putCreate},
		{copyCreate, completeCreate},
		{copyCAS, copyCAS},
		{copyCAS, putCAS},
		{copyCAS, completeCAS},
		{copyCAS, del},
		{copyCAS, delEntry},
		{del, putCAS},
		{delEntry, putCAS},
	}
}

// raceAll races, concurrently, every spec whose two sides were right one
// request at a time (right), and turns each raced capability's sequential
// verdict into native, racy or error. A race whose opponent was not right
// is not run, and said so: the opponent is not native, so neither is the
// store, whatever the race would show.
func raceAll(ctx context.Context, s *store, caps map[string]Result, right map[string]bool) {
	specs := raceSpecs(caps)
	results := make([]*raceResult, len(specs))
	skipped := map[string][]string{}
	var wg sync.WaitGroup
	for i, spec := range specs {
		subject, opponent := spec.subject.capability, spec.opponent.capability
		switch {
		case !right[subject]:
			continue
		case !right[opponent]:
			skipped[subject] = append(skipped[subject], spec.opponent.name+" ("+string(caps[opponent].Verdict)+")")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := s.race(ctx, spec)
			results[i] = &res
		}()
	}
	wg.Wait()
	bySubject := map[string][]raceResult{}
	for _, res := range results {
		if res != nil {
			bySubject[res.spec.subject.capability] = append(bySubject[res.spec.subject.capability], *res)
		}
	}
	for _, name := range WriteCapabilities {
		if len(bySubject[name]) > 0 || len(skipped[name]) > 0 {
			caps[name] = raceVerdict(caps[name], bySubject[name], skipped[name])
		}
	}
}

// raceVerdict is racy if any race was, error if any could not be run,
// native otherwise; the evidence names the races.
func raceVerdict(sequential Result, races []raceResult, skipped []string) Result {
	verdict := Native
	var evidence []string
	raced := ""
	for _, r := range races {
		switch {
		case r.err != nil && verdict == Native:
			verdict = Error
			evidence = append(evidence, "race: "+r.err.Error())
		case r.racy():
			if verdict != Racy {
				evidence = nil
			}
			verdict = Racy
			evidence = append(evidence, "race: "+r.String())
			raced = "lost the race " + r.String()
		case verdict == Native:
			evidence = append(evidence, "race: "+r.String())
		}
	}
	if len(skipped) > 0 {
		evidence = append(evidence, "not raced against "+strings.Join(skipped, ", "))
	}
	detail := sequential.Detail + "; " + strings.Join(evidence, "; ")
	if sequential.Remedy != "" {
		// Partial stays partial; the remedy stands only if it won.
		if verdict != Native {
			return Result{Verdict: Partial, Detail: detail + "; remedy " + sequential.Remedy + " is " + string(verdict), Raced: raced}
		}
		return Result{Verdict: Partial, Detail: detail + "; remedy " + sequential.Remedy + " raced", Remedy: sequential.Remedy}
	}
	return Result{Verdict: verdict, Detail: detail, Raced: raced}
}
