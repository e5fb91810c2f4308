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
