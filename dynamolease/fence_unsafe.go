//go:build s3cond_unsafe_generation_only_takeover

package dynamolease

// unsafeGenerationOnlyTakeover, only in a build with the tag
// s3cond_unsafe_generation_only_takeover, sends every takeover without its
// Fence, conditioned on the generation alone as before issue 33: a due
// takeover then wins over a row born at generation 0 that was swept and
// created anew since the waiter last read it. It is the linearizability
// suite's negative control (e2e/linearizability,
// TestNegativeControlGenerationOnlyTakeover*). Never ship a build with it.
const unsafeGenerationOnlyTakeover = true
