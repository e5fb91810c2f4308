package dynamolease

import "math/rand/v2"

// Bounds of the generation a create writes. The floor keeps it clear of the
// small counters rows written from 0 carry (arrow-rs's, and s3cond's before
// this rule); the ceiling keeps every renewal and takeover after it far
// below the generation an unreadable row reads with (1 << 62) and the
// largest one believed (1 << 63).
const (
	minFirstGeneration uint64 = 1 << 32
	maxFirstGeneration uint64 = 1 << 61
)

// firstGeneration is the generation a create writes: a random one, not 0.
// A takeover is conditional on the generation it saw alone (the condition
// arrow-rs's rows are written for), and a row may vanish (TTL) and be
// created anew while a waiter watches it. Were every row born at 0, the
// waiter's takeover of the vanished row would win over the new holder's
// live lease, and both would write; a random first generation makes the
// new row another one to that condition.
func firstGeneration() uint64 {
	if unsafeGenerationZero {
		return 0
	}
	return minFirstGeneration + rand.Uint64N(maxFirstGeneration-minFirstGeneration)
}
