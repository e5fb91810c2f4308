package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// The rounds a race runs are what bounds the chance of missing a store's
// race; at the cap the probe races (DefaultRounds, reached by a store
// that answers at once), a race lost one round in RareRaceRounds is found
// on its RareRaceRounds-th round. The fake loses on exactly that round,
// so the verdict does not depend on chance: it fails with the former cap
// of 20 rounds, and with a probe that stops at a round that would not fit.
func TestProbeRacesEnoughRoundsForARareRace(t *testing.T) {
	opts := startFake(t, testservers.NewRarelyRacyDeleteStore)
	// Rounds of 2 writers (1 DeleteObject, 1 PutObject) are enough on a
	// fake that forces its race, and cheap on a loaded machine; the rounds
	// are DefaultRounds, and time is no bound here.
	opts.Writers, opts.Rounds, opts.RaceTime, opts.Timeout = 2, 0, 30*time.Second, 2*time.Minute
	rep := runProbe(t, opts)
	got := rep.Capabilities[DeleteIfMatch]
	if got.Verdict != Racy || !strings.Contains(got.Raced, "DeleteObject If-Match vs PutObject If-Match: 40 rounds") {
		t.Fatalf("delete_if_match: %s, raced %q (%s); want racy on round %d of its race",
			got.Verdict, got.Raced, got.Detail, testservers.RareRaceRounds)
	}
	wantVerdicts(t, rep, map[string]Verdict{PutIfMatch: Native, DeleteObjectsETag: Native})
}

// Hundreds of rounds must not leave thousands of keys for cleanup (whose
// bound is 20 s at most): a copy race writes one source key per writer
// for the whole race, not one per writer and round.
func TestCopyRaceReusesItsSourceKeys(t *testing.T) {
	opts := startFake(t, testservers.NewAtomicStore)
	opts.Writers, opts.Rounds, opts.RaceTime = 4, 10, time.Minute
	s := newStore(opts.withDefaults())
	defer s.close()
	res := s.race(t.Context(), raceSpec{copyRacer(true), putRacer(true, "")})
	if res.err != nil || len(res.writers) != 10 {
		t.Fatalf("%s (%v): want 10 rounds", res, res.err)
	}
	var sources int
	for key := range s.written.keys {
		if strings.Contains(key, "/source-") {
			sources++
		}
	}
	// The even writers of a round copy (raceSpec.writer alternates).
	if sources > opts.Writers {
		t.Errorf("%d source keys written for 10 rounds, want at most %d (one per writer)", sources, opts.Writers)
	}
	s.cleanup(t.Context())
}
