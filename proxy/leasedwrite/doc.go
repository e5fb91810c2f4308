// Package leasedwrite runs s3cond's conditional writes on a store that
// cannot be trusted with them: PutObject, CopyObject,
// CompleteMultipartUpload and DeleteObject carrying If-Match /
// If-None-Match (every such write in strict mode), the conditional
// entries of a DeleteObjects, each under its key's lease, and
// RenameObject under both of its keys' (docs/spec.md §3 and "RenameObject"
// are the protocol; this package is its one implementation in the request
// path).
//
// # Reading order
//
// A write is Writer.Run (write.go), whose steps are the methods of one
// type, in the order they run:
//
//	seek       early.go, size.go  the lease where its ETag is known up front,
//	                              and the measure of a copy's or completion's work
//	readState  write.go           the fail-fast HEAD and the condition on it
//	hold       acquire.go         take (or await) the lease, re-check, size it,
//	                              the half-lease rule; the guard keeps it;
//	           renamefinish.go    a lease taken from a vanished holder first
//	                              finishes a RenameObject it left half done
//	send       write.go           one of three orderings of hold and send:
//	                              bufferHoldSend, sendHoldingBack, holdThenSend
//	answer     lapsed.go          before a success is relayed: the leases held
//	                              throughout, unconfirmed rows read back
//	release    guard.go, releases.go  released in the background, or left
//	                              to expire when the outcome is unknown
//
// In strict mode a write whose condition names its lease skips seek's
// early lease and readState's HEAD: hold takes the lease first and reads
// the state its row records, or HEADs under it (recorded.go).
//
// DeleteObjects (delete.go, deletebatch.go) takes the same steps for many
// keys: every state read first, the leases in key order and in batches,
// one wait budget, one guard.
//
// RenameObject is Writer.Rename (rename.go; docs/spec.md, "RenameObject"),
// whose steps run in this order:
//
//	token      rename.go          with a client token: its own rename lock
//	                              (holdRenameToken), then its record read
//	                              (a replay answers 200 or 400 here)
//	read       rename.go          HEAD both keys; RenameRequest.Evaluate
//	hold       renamelease.go     both keys' rename locks and version leases
//	                              in key order, each version re-checked;
//	                              sized to the copy; renewed; a loss stops it
//	finish     renameintent.go    an intent left on either key finished or
//	                              dropped first, both keys then read again
//	move       renamemove.go      the intent written, CopyObject, the intent
//	                              moved to copied, DeleteObject, the intent
//	                              cleared, through RenameStore
//	release    rename.go          the leases released once the outcome is
//	                              known (else left to expire); the token's
//	                              record written, then its lock released
//
// A conditional write whose lease was taken over from a vanished holder
// finishes that holder's rename first (renamefinish.go), under both keys'
// rename locks.
//
// # The seam
//
// The package knows leases, not HTTP. proxy gives it a Request (what the
// write addresses, its Mode), a StateReader (HEAD a target, a copy
// source's size, a completion's parts' total), for a rename a RenameStore
// (HEAD, CopyObject and DeleteObject of its bucket, renameseam.go), and a
// Sender, which sends the write's one store request with a Guard: two
// hooks in the manner of httputil.ReverseProxy's, BeforeFinalByte (run on
// net/http's goroutine writing the request body, when the body's final
// byte would leave) and BeforeSuccess (run before a 2xx is relayed), the
// request's context, and the condition headers to send. The store's Mode (native, hold-back,
// lease-first, and the conditions it checks itself) is chosen by
// internal/app and read once per request.
//
// # Goroutines
//
// A leased write runs on its handler's goroutine and may start these,
// each ended as said. Two may run on after the handler returns: the
// background releases, which Writer.WaitForReleases waits for, and a
// sizing whose write failed before it was needed, which ends with its
// request once net/http cancels the request's context.
//
//   - client watch (guard.watchClient), one per write, started by
//     guardWrite: ends when release closes the guard's done channel. If the
//     client hangs up first it cancels a write that has not reached the
//     store; one that has gets the detached write limit, after which the
//     watch cancels it (its leases left to expire).
//   - loss watch (guard.watchLost), one per lease held, started by
//     guard.hold: ends at release, or when the lease is lost, cancelling
//     the write's store request.
//   - renewals (dynamolease.Lease.KeepAlive), one per lease held, started
//     by guard.hold: stopped by release.
//   - early lease (startEarlyLease), at most one per write: ends when the
//     lease store answers; its context is cancelled by hold once awaited,
//     or by abandonEarly, which hands what is granted anyway to a
//     background release.
//   - sizing (startSizing), for a CopyObject or CompleteMultipartUpload:
//     ends with its HEAD or ListParts, bounded by the client's request
//     context (net/http cancels it when the handler returns); hold waits
//     for it. (An append's PutObject names its work, Request.StoreWork:
//     no goroutine.)
//   - state reads of a DeleteObjects (readDeleteStates), 32 at a time:
//     awaited before any lease is sought.
//   - birth (in dynamolease.Lease.Release), at most one per release of a
//     strict-mode write that recorded a new version: writes that version's
//     lease row beside the release's own write (recorded.go); the release
//     waits for it.
//   - background release (releaseInBackground, releaseAllInBackground,
//     abandonEarly's), started by release or abandonEarly: each bounded by
//     releaseTimeout, counted by releaseTracker, awaited by
//     Writer.WaitForReleases at shutdown.
//
// A rename runs on its handler's goroutine and returns only when every
// goroutine it started has been told to end (its releases are not in the
// background: the handler waits for them, each bounded by the lease
// table's timeout):
//
//   - renewals (dynamolease.Lease.KeepAlive), one per lease held, the
//     token's lock included, started by keepRenameLeases and
//     holdRenameToken: stopped before the leases are released.
//   - loss watch (untilLeaseLost), one per key lease: ends when the
//     rename's work context ends (cancelled on return), or on a loss,
//     which cancels that context and so the rename's store requests.
package leasedwrite
