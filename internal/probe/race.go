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

// raceResult counts writers and winners per round.
type raceResult struct {
	spec       raceSpec
	writers    []int
	winners    []int
	maxWinners int
	// lost says how a round's key ended other than its winners left it.
	lost string
	err  error
}

func (r raceResult) racy() bool { return r.maxWinners > 1 || r.lost != "" }

func (r raceResult) String() string {
	rounds := fmt.Sprintf("%d rounds", len(r.writers))
	if len(r.writers) == 1 {
		rounds = "1 round"
	}
	s := fmt.Sprintf("%s: %s, writers per round [%s] on 2 connection pools, winners per round [%s]", r.spec, rounds, counts(r.writers), counts(r.winners))
	if r.lost != "" {
		s += ", " + r.lost
	}
	return s
}

// race runs rounds of spec, stopping at the first that is racy. Rounds
// start with 2 writers (s.firstWriters) and double up to s.writers, as
// many as fit in s.raceTime (fittingWriters: at least one round, at most
// s.rounds). On SeaweedFS 4.53 contending writers of one key take its
// write lock one a second (its lock client retries each second): a round
// of 8 took 6 s, one of 2 takes 1 s; a fast store races 8 writers round
// after round for the whole s.raceTime.
//
// Why rounds, not a round: a store that is not atomic loses a race only
// when two writers meet inside its window, by chance. If it loses a round
// with probability p, n rounds all miss it with probability (1-p)^n: at
// p = 1/40 (SeaweedFS's copies), 120 rounds miss it 4.8% of the time, 180
// rounds 1.1%, 400 rounds (DefaultRounds) 0.004%; at versitygw's DeleteObject
// rate against three PutObjects (61 of 300, p = 0.2), 20 rounds miss it
// 1.2% of the time. How many rounds fit the 2 s of a start-up race
// depends on the store and the machine (versitygw on a loaded testbed: 6
// to 73); one that queues its writers (SeaweedFS: a second a round) races
// 1 to 8, and misses a 1-in-40 race about 93% of the time in 3. That is why a race lost
// once stays lost (HoldBackRaced) and why a store measured racy is held
// racy from the start (knownracy.go); the background re-probe races
// longer (internal/app/reprobe.go). The evidence says how many rounds ran.
func (s *store) race(ctx context.Context, spec raceSpec) raceResult {
	res := raceResult{spec: spec}
	// A copy's sources are one key per writer for the whole race, written
	// again each round: hundreds of rounds leave tens of keys to delete,
	// not thousands.
	sources := s.key("source-" + spec.subject.slug + "-vs-" + spec.opponent.slug)
	started := time.Now()
	var last time.Duration
	for round := range s.rounds {
		writers := s.firstWriters
		if round > 0 {
			if writers = s.fittingWriters(last, res.writers[round-1], s.raceTime-time.Since(started)); writers == 0 {
				break
			}
		}
		roundStarted := time.Now()
		winners, lost, err := s.raceRound(ctx, spec, writers, sources)
		if err != nil {
			res.err = fmt.Errorf("%s: round %d: %w", spec, round, err)
			return res
		}
		last = time.Since(roundStarted)
		res.writers = append(res.writers, writers)
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
func (s *store) raceRound(ctx context.Context, spec raceSpec, writers int, sources string) (winners int, lost string, err error) {
	rd := raceRound{key: s.key("race-" + spec.subject.slug + "-vs-" + spec.opponent.slug), sources: sources}
	if spec.subject.onVersion {
		if rd.etag, err = s.seed(ctx, rd.key, versionZero(rd.key)); err != nil {
			return 0, "", err
		}
	}
	kinds := make([]racer, writers)
	attempts := make([]attempt, writers)
	errs := make([]error, writers)
	var prepared sync.WaitGroup
	for i := range attempts {
		kinds[i] = spec.writer(i)
		prepared.Add(1)
		go func() {
			defer prepared.Done()
			attempts[i], errs[i] = kinds[i].prepare(ctx, s, rd, i, s.clients[poolOf(i)])
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

// fittingWriters is how many writers the next round races: twice the
// last round's (at most s.writers), halved while a round of them, scaled
// from the last one (which took took), would not end within left; never
// fewer than s.firstWriters, and 0 when not even they fit. A store whose
// wide rounds are slow (SeaweedFS queues contending writers) goes on
// racing narrow rounds, rather than stopping at the first wide round
// that would not fit: every round is one more chance to catch a race the
// store loses now and then.
func (s *store) fittingWriters(took time.Duration, last int, left time.Duration) int {
	for writers := min(last*2, s.writers); writers >= s.firstWriters; writers /= 2 {
		if scaledRound(took, last, writers) <= left {
			return writers
		}
	}
	return 0
}

// scaledRound is how long a round of next writers would take, from one of
// writers that took took: a store that queues contending writers (a step
// each) takes about a step per writer after the first.
func scaledRound(took time.Duration, writers, next int) time.Duration {
	return took * time.Duration(next-1) / time.Duration(writers-1)
}

// poolOf is the connection pool writer i uses: writers 0 and 1 (a subject
// and an opponent) on the two pools, and each pool carrying both kinds
// from 4 writers on (0 1 1 0 0 1 1 0).
func poolOf(i int) int { return (i + i/2) % 2 }

// counts is ns run-length encoded ("2 4 8×397"): a race runs up to
// hundreds of rounds.
func counts(ns []int) string {
	var out []string
	for i := 0; i < len(ns); {
		j := i
		for j < len(ns) && ns[j] == ns[i] {
			j++
		}
		if j-i == 1 {
			out = append(out, fmt.Sprint(ns[i]))
		} else {
			out = append(out, fmt.Sprintf("%d×%d", ns[i], j-i))
		}
		i = j
	}
	return strings.Join(out, " ")
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
