package linearizability

import "testing"

// BenchmarkStrictRecordedFloor is BenchmarkRoundTripFloor's setting (store
// and lease store behind delay proxies) in strict mode, where recorded key
// states let a CAS chain skip its HEAD (SPEC §3, "Recorded key states"):
// its cas-chain is to be read against BenchmarkRoundTripFloor's put of the
// same lease store (an unleased PUT outside strict mode). The first write
// of a chain creates its row and reads the store; b.N of at least 10 keeps
// it off the median. put-strict is strict mode's leased unconditional PUT.
//
//	S3COND_BENCH_STORE_RTT=20ms S3COND_BENCH_LEASE_RTT=10ms go test -run '^$' \
//	  -bench 'BenchmarkStrictRecordedFloor|BenchmarkRoundTripFloor/.*/put$' -benchtime 25x ./e2e/linearizability/
func BenchmarkStrictRecordedFloor(b *testing.B) {
	onEachFloorStore(b, strictMode, func(b *testing.B, _ string, f *floorBench) {
		b.Run("cas-chain", f.each(f.casChain()))
		b.Run("put-strict", f.each(f.put))
	})
}
