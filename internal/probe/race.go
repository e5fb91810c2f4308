package probe

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// raceSpec is one race: writers of subject and of opponent released
// together on one key. A double winner, or a key left other than its one
// winner (or no winner) left it, makes subject racy: the opponent was (or
// will be) raced as a subject on its own, so a store whose opponent is
// the racy one is still found, and never called native.
type raceSpec struct{ subject, opponent racer }

func (r raceSpec) String() string {
	if r.subject.slug == r.opponent.slug {
		return r.subject.name + " vs itself"
	}
	return r.subject.name + " vs " + r.opponent.name
}

// writer is the kind of writer i of a round: subject and opponent
// alternately, except that a delete races as one writer per round. Two
// deletes of one version may both answer 204 where S3 answers the second
// 404 (versitygw does); that is delete_if_match's sequential case on a
// missing key, not a race of the write it meets.
func (r raceSpec) writer(i int) racer {
	switch {
	case r.subject.removes && r.subject.slug != r.opponent.slug:
		if i == 0 {
			return r.subject
		}
		return r.opponent
	case r.opponent.removes:
		if i == 1 {
			return r.opponent
		}
		return r.subject
	case i%2 == 1:
		return r.opponent
	}
	return r.subject
}

// raceResult counts winners per round.
type raceResult struct {
	spec       raceSpec
	writers    int
	winners    []int
	maxWinners int
	// lost says how a round's key ended other than its winners left it.
	lost string
	err  error
}

func (r raceResult) racy() bool { return r.maxWinners > 1 || r.lost != "" }

func (r raceResult) String() string {
	counts := make([]string, len(r.winners))
	for i, w := range r.winners {
		counts[i] = fmt.Sprint(w)
	}
	s := fmt.Sprintf("%s: %d writers on 2 connection pools, winners per round [%s]", r.spec, r.writers, strings.Join(counts, " "))
	if r.lost != "" {
		s += ", " + r.lost
	}
	return s
}

// race runs rounds of spec, stopping at the first that is racy: it starts
// rounds for s.raceTime, at least one and at most s.rounds.
func (s *store) race(ctx context.Context, spec raceSpec) raceResult {
	res := raceResult{spec: spec, writers: s.writers}
	started := time.Now()
	for round := range s.rounds {
		if round > 0 && time.Since(started) >= s.raceTime {
			break
		}
		winners, lost, err := s.raceRound(ctx, spec)
		if err != nil {
			res.err = fmt.Errorf("%s: round %d: %w", spec, round, err)
			return res
		}
		res.winners = append(res.winners, winners)
		res.maxWinners = max(res.maxWinners, winners)
		if lost != "" {
			res.lost = fmt.Sprintf("round %d: %s", round, lost)
		}
		if res.racy() {
			return res
		}
	}
	if res.maxWinners == 0 {
		// Every writer refused every round: nothing was raced.
		res.err = fmt.Errorf("%s: no round had a winner", spec)
	}
	return res
}

// raceRound seeds a fresh key (for writers on a version), prepares the
// writers (spec.writer, each kind on both pools),
// releases them together and checks what the key holds afterwards.
func (s *store) raceRound(ctx context.Context, spec raceSpec) (winners int, lost string, err error) {
	rd := raceRound{key: s.key("race-" + spec.subject.slug + "-vs-" + spec.opponent.slug)}
	if spec.subject.onVersion {
		if rd.etag, err = s.seed(ctx, rd.key, versionZero(rd.key)); err != nil {
			return 0, "", err
		}
	}
	kinds := make([]racer, s.writers)
	attempts := make([]attempt, s.writers)
	errs := make([]error, s.writers)
	var prepared sync.WaitGroup
	for i := range attempts {
		kinds[i] = spec.writer(i)
		prepared.Add(1)
		go func() {
			defer prepared.Done()
			attempts[i], errs[i] = kinds[i].prepare(ctx, s, rd, i, s.clients[(i/2)%len(s.clients)])
		}()
	}
	prepared.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, "", err
		}
	}
	outcomes := releaseTogether(ctx, attempts)
	winner := -1
	for i, o := range outcomes {
		switch {
		case o.err != nil:
			return 0, "", o.err
		case o.status >= 200 && o.status < 300:
			winners++
			winner = i
		case !conditionRefusal(o.status):
			// A loser must have lost to the condition: a 500 or a 503 says
			// nothing about whether the store would have let it win.
			return 0, "", fmt.Errorf("writer %d (%s) answered %s", i, kinds[i].name, o)
		}
	}
	if winners > 1 {
		return winners, "", nil
	}
	lost, err = s.leftAsWon(ctx, rd, spec, kinds, winner)
	return winners, lost, err
}

// conditionRefusal is how S3 answers a writer that lost a race: 412
// PreconditionFailed, 404 NoSuchKey (a write on a version deleted by the
// winner) or 409 ConditionalRequestConflict.
func conditionRefusal(status int) bool {
	return status == 412 || status == 404 || status == 409
}

// releaseTogether starts every attempt at once (a barrier) and waits for all.
func releaseTogether(ctx context.Context, attempts []attempt) []outcome {
	outcomes := make([]outcome, len(attempts))
	barrier := make(chan struct{})
	var wg sync.WaitGroup
	for i, a := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-barrier
			outcomes[i] = a(ctx)
		}()
	}
	close(barrier)
	wg.Wait()
	return outcomes
}

// leftAsWon checks the key after a round with at most one winner: it must
// hold the winner's body (every writer writes its own, writerBody), be gone
// after a winning delete, and with no winner be as the round began. Anything
// else is a write acknowledged and then lost, or a refused write that
// landed anyway. Bodies, not ETags, are compared: stores disagree on a
// completed upload's ETag between its answer and a HEAD (gofakes3 does).
// It returns what it found wrong, or "".
func (s *store) leftAsWon(ctx context.Context, rd raceRound, spec raceSpec, kinds []racer, winner int) (string, error) {
	present, want := spec.subject.onVersion, versionZero(rd.key)
	who := "no writer won"
	if winner >= 0 {
		present, want = !kinds[winner].removes, writerBody(rd, winner)
		who = fmt.Sprintf("writer %d (%s) won", winner, kinds[winner].name)
	}
	got, status, err := s.body(ctx, rd.key)
	switch {
	case err != nil:
		return "", fmt.Errorf("read %s after the race: %w", rd.key, err)
	case present && status == 404:
		return who + ", and the key is gone", nil
	case !present && status == 200:
		return fmt.Sprintf("%s, and the key holds %q", who, got), nil
	case present && got != want:
		return fmt.Sprintf("%s, and the key holds %q, not %q", who, got, want), nil
	}
	return "", nil
}

func versionZero(key string) string { return "version 0 of " + key }
