// Package testkit holds what tests of several packages need alike, so no
// test copies it:
//
//   - Events: waiting for what a component reports (request records, write
//     ends, outcomes) instead of sleeping until it has probably happened.
//   - Eventually, Within and Poll: asking again, with a deadline and the
//     last answer in the failure, where only another process or the kernel
//     knows (a server's port, Prometheus, a store committing late). Code of
//     the test's own reports itself instead.
//   - Certificates (NewCertificate, WriteSelfSigned): test CAs and
//     self-signed server pairs.
//   - S3 request signing (S3Signer, Sign, SignAt, SignAsWritten) and
//     aws-chunked framing (UnsignedChunks, ChunkSigner, SigningKey, Scope).
//     The chunk signatures are SigV4's formulas written out apart from
//     package sigv4, which tests its decoder against them; sigv4's tests
//     also keep aws-sdk-go-v2's signer (through S3Signer) as the reference
//     its verifier and backend signer are held to.
//
// # Sleeps that remain, and why
//
// Each is time that is itself the subject, or a pause a real client or
// operator would make; none orders two events of the test's own.
//
//   - proxy: slowCreateTable's delay and pacedReader's pause stand for a
//     slow lease store and a slow client (timeouts are what is tested);
//     the lease-age waits in lapsedlease_test.go and
//     proxy/leasedwrite/delete_test.go wait once for a moment on the
//     lease's own clock (half its life, its lapse); synctest cannot hold
//     the first, whose fixture uses real sockets (the second, moved from
//     deleteobjects_test.go, has none left and could move to synctest).
//   - e2e lateWriteGrace (helpers_test.go, races_test.go): versitygw may
//     commit a cut-off body after the abort, and an absence reports
//     nothing, so the check that nothing was stored waits that long first.
//   - e2e races_test.go testKilledHolder: 500 ms for the holder to take the
//     lease before it is killed; s3cond reports nothing a fleet test can
//     wait on (its admin listener is not exposed per process there).
//   - e2e etcd_fleet_test.go: a worker's 50 ms pause before retrying
//     through a killed process (a client's backoff).
//   - e2e/linearizability: fault schedules (sleepCtx, KillAndRestart's
//     pause, the freeze and kill durations, a history's tail, the 2 s of
//     history after a takeover) are how long a fault lasts, and the
//     backend connection's 200 ms stillness check in heldupload.go is how
//     "s3cond waits for more body" shows from outside; cluster.go retries
//     `s3cond table create` a second apart while moto starts.
//   - dynamolease and its stores: the sleeps in takeover_test.go,
//     sized_test.go and boltstore's sweep_test.go run in synctest bubbles
//     (the lease's own clock, faked). committer_test.go's hot-key test
//     holds each lease a millisecond so that others contend for it (the
//     pause is the load, not an order). boltstore's durability test waits
//     out the recovery window of a reopened lease file, the time under
//     test, against a real file lock that a bubble cannot hold. etcdstore
//     waits on the etcd server's own timers: a row's TTL (polled every
//     100 ms) and an auth token's lifetime.
package testkit
