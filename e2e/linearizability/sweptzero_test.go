package linearizability

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// Rows born at generation 0 come from writers s3cond does not control: an
// s3cond of a release before random first generations (a rolling upgrade)
// and arrow-rs (sweptarrowrs_test.go). A waiter's due takeover, sent
// without a fresh read, is fenced on the row it saw (owner, TTL, timeout:
// dynamolease/fence.go), so a row swept and created anew at generation 0
// since its last poll is never taken. The tag below turns the fence off:
// the negative controls.

// unsafeGenerationOnlyTakeover is the build tag of dynamolease's takeovers
// conditioned on the generation alone, as before issue 33.
const unsafeGenerationOnlyTakeover = "s3cond_unsafe_generation_only_takeover"

// previousReleaseFleet: the dead holder (proxy 0) and the next holder
// (proxy 2) create rows at generation 0, as the previous release did; the
// waiter (proxy 1) is this build, or waiterTags's.
func previousReleaseFleet(waiterTags string) ClusterOptions {
	return ClusterOptions{ProxyBuildTags: map[int]string{0: unsafeGenerationZero, 1: waiterTags, 2: unsafeGenerationZero}}
}

// TestLinearizableWithAPreviousReleaseInTheFleet: the swept-row scenario
// with the rows born at 0 by previous-release processes beside this one.
func TestLinearizableWithAPreviousReleaseInTheFleet(t *testing.T) {
	t.Parallel()
	rec := recordSweptRow(t, sweptRowFleet(t, previousReleaseFleet("")))
	RequireLinearizable(t, rec)
}

// TestNegativeControlGenerationOnlyTakeoverInAMixedFleet: the same with
// the waiter's fence turned off must be caught: its takeover wins over the
// new row, and both creates succeed.
func TestNegativeControlGenerationOnlyTakeoverInAMixedFleet(t *testing.T) {
	t.Parallel()
	rec := recordSweptRow(t, sweptRowFleet(t, previousReleaseFleet(unsafeGenerationOnlyTakeover)))
	requireIllegal(t, rec, "a waiter fenced on the generation alone beside previous-release processes")
}

// TestNegativeControlGenerationZero: every process creating at 0 and
// taking over on the generation alone (the protocol before both random
// first generations and the fence) must be caught as not linearizable. It
// shows the swept-row tests would see a swept row's takeover.
func TestNegativeControlGenerationZero(t *testing.T) {
	t.Parallel()
	rec := recordSweptRow(t, sweptRowCluster(t, unsafeGenerationZero+","+unsafeGenerationOnlyTakeover))
	requireIllegal(t, rec, "every row born at generation 0 and taken over on the generation alone")
}

// requireIllegal fails the test unless the checker finds rec not
// linearizable: a negative control's proof that the suite sees the fault.
func requireIllegal(t *testing.T, rec *Recorder, what string) {
	t.Helper()
	result := Check(t, rec)
	t.Logf("checked %s: %s", rec.Stats(), result)
	if result != porcupine.Illegal {
		t.Fatalf("the checker found %s with %s; want Illegal: the suite cannot see a swept row's takeover", result, what)
	}
}
