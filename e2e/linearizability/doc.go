// Package linearizability checks s3cond's conditional writes the way Jepsen
// does: many concurrent clients run creates (If-None-Match: *), compare-and-
// swaps (If-Match), conditional deletes, reads and optionally unconditional
// writes against a few keys while faults are injected (processes killed, the
// lease store restarted, a slow or resetting backend); every call and its
// outcome is recorded, and porcupine decides whether some sequential order
// of the operations, consistent with real time, explains every result.
//
// Operations whose outcome the client cannot know (timeouts, 5xx, broken
// connections) are kept as "may have happened": they stay open until the end
// of the history and the model lets them take effect or not. s3cond's 503
// for an unreachable lease store is not among them: s3cond answers it before
// anything reaches the backend, and the model holds it to that.
//
// The tests start real servers (versitygw, s3rver, moto, etcd, s3cond)
// through internal/testservers. ClusterOptions.Backend puts s3rver, which
// ignores conditional headers, behind s3cond instead of versitygw
// (s3rver_test.go), ClusterOptions.Etcd shares an etcd cluster as the lease
// store, and ClusterOptions.Direct runs a workload straight on the store, as
// the control that must not be linearizable. S3COND_SOAK_DURATION makes the
// recording phases run
// longer (scripts/soak.sh).
package linearizability
