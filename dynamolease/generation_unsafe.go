//go:build s3cond_unsafe_generation_zero

package dynamolease

// unsafeGenerationZero, only in a build with the tag
// s3cond_unsafe_generation_zero, makes every create write generation 0, as
// before random first generations: a waiter whose takeover is due wins
// over a row that vanished and was created anew meanwhile, unless its
// takeover is fenced (fence.go). With s3cond_unsafe_generation_only_takeover
// it is the linearizability suite's negative control for that
// (e2e/linearizability, TestNegativeControlGenerationZero); alone, it
// plays a previous release's process (TestLinearizableWithAPreviousReleaseInTheFleet).
// Never ship a build with it.
const unsafeGenerationZero = true
