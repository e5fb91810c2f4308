package etcdstore

import (
	"math"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

// Replace's condition is "low < value < high" on bytes: it must hold for
// every value of the seen generation and for no other generation's.
func TestEtcdGenerationBoundsSelectExactlyOneGeneration(t *testing.T) {
	generations := []uint64{0, 1, 9, 10, 11, 99, 100, 1 << 32, math.MaxUint64 - 1, math.MaxUint64}
	for _, seen := range generations {
		low, high := generationBounds(seen)
		for _, stored := range generations {
			for _, r := range []dynamolease.Record{
				{Path: "b/k", ETag: "*", Generation: stored},
				{Path: "b/k", ETag: `"e"`, Generation: stored, Timeout: time.Second, TTL: time.Unix(1, 0), Owner: "o", Released: true},
			} {
				value, err := encodeEtcdRow(r)
				if err != nil {
					t.Fatal(err)
				}
				if matched := low < value && value < high; matched != (stored == seen) {
					t.Errorf("seen %d, stored %d: condition says %v", seen, stored, matched)
				}
				back, err := decodeEtcdRow([]byte(value), r.Path, r.ETag)
				want := stored
				if stored >= rowcodec.MaxGeneration {
					// Not believed (internal/rowcodec): a takeover must not overflow.
					want = rowcodec.UnreadableGeneration
				}
				if err != nil || back.Generation != want || (back.Unreadable != "") != (stored >= rowcodec.MaxGeneration) {
					t.Errorf("decode generation %d: %+v, %v", stored, back, err)
				}
			}
		}
	}
}

func TestEtcdKeysOfDifferentRowsDiffer(t *testing.T) {
	tbl := &Table{prefix: DefaultPrefix}
	pairs := [][2]string{{"a/b", "c"}, {"a", "b/c"}, {"a%2Fb", "c"}, {"a", `"c"`}, {"a", "c"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		key := tbl.Key(p[0], p[1])
		if other, dup := seen[key]; dup {
			t.Errorf("rows %q and %q share the key %q", other, p, key)
		}
		seen[key] = p
	}
}
