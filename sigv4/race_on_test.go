//go:build race

package sigv4

// raceEnabled: under the race detector sync.Pool drops items at random, so
// allocation counts are not the program's.
const raceEnabled = true
