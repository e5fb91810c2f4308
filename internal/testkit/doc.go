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
// Each is time that is itself the subject, or a pause a real client,
// store or operator would make; none orders two events of the test's own.
// (Kept current by grepping the tests for time.Sleep, sleepCtx and bare
// time.After waits, on 2026-12-07, after issue 34. A time.After that only bounds how long
// a test waits for an event, failing it, is a deadline, not a sleep.)
//
//   - proxy: slowCreateTable's delay (deleteobjects_test.go) and
//     batchCountingTable's latency (deletebatch_test.go) stand for a slow
//     lease store, pacedReader's pause (timeouts_test.go) for a slow
//     client: timeouts and batching under latency are what is tested (their
//     tables are dynamolease/leasetest's, the delay in a hook). The
//     lease-age wait in lapsedlease_test.go (lateAnswer) waits once for the
//     lease's lapse on its own clock; synctest cannot hold it, as its
//     fixture uses real sockets. proxy/leasedwrite's confirm_test.go (past
//     lease.timeout) and delete_test.go (half a lease's life) wait the same
//     way in synctest bubbles, so no real time passes.
//     proxy/leasedwrite/releases_test.go's 50 ms and strict_test.go's
//     300 ms check for a moment that a wait which must not end has not (a
//     negative; nothing reports "still waiting").
//   - internal/embedded (multipartetag_test.go) and internal/frontconn
//     (cap_test.go): the same 50 ms negative checks, on a key lock and a
//     connection cap.
//   - e2e lateWriteGrace (helpers_test.go, races_test.go): versitygw may
//     commit a cut-off body after the abort, and an absence reports
//     nothing, so the check that nothing was stored waits that long first.
//   - e2e etcd_fleet_test.go: a worker's 50 ms pause before retrying
//     through a killed process, and leasefile_sized_test.go's 100 ms
//     between a contender's retries (a client's backoff);
//     writesinplace_test.go's slowBody is the slow client itself;
//     lease_outlives_test.go hangs its client up at most 100 ms into a
//     write that must still be running (the hang-up's timing is the
//     scenario); terraformlock's contenders back off 1–10 ms at random,
//     as Terraform's lock retries do.
//   - e2e/linearizability: fault schedules (sleepCtx, KillAndRestart's
//     pause, the freeze and kill durations, a history's tail, the 2 s of
//     history after a takeover) are how long a fault lasts, and the
//     backend connection's 200 ms stillness check in heldupload.go is how
//     "s3cond waits for more body" shows from outside; cluster.go retries
//     `s3cond table create` a second apart while moto starts. The lease's
//     own clock shapes deleteholder_test.go (a probe half a budget before
//     the hold ends), sweptrow_test.go (a waiter arriving against the
//     row's TTL; the order of its polls is awaited from its metrics) and
//     strict_test.go (a PUT watched for half the CAS's lease).
//   - dynamolease and its stores: the sleeps in takeover_test.go,
//     sized_test.go, confirm_test.go, fence_test.go, vanished_test.go,
//     tablecall_test.go and boltstore's sweep_test.go and durability_test.go
//     (the recovery window of a reopened lease file) run in synctest
//     bubbles (the lease's own clock, faked). committer_test.go's hot-key
//     test holds each lease a millisecond so that others contend for it
//     (the pause is the load, not an order).
//     etcdstore waits on the etcd server's own timers: a row's TTL (polled
//     every 100 ms, table_test.go) and an auth token's lifetime
//     (auth_test.go); table_test.go's 300 ms is a negative check that a
//     second process does not get a held lease.
package testkit
