package leasedwrite

import (
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
)

// write is one leased PutObject, CopyObject, CompleteMultipartUpload or
// DeleteObject (SPEC §3). Its steps are its methods, in the order they run:
// seek, readState, then one of three orderings of hold and send (sendAndAnswer),
// and release.
type write struct {
	w    *Writer
	req  Request
	cond Condition
	send Sender
	// sizing measures a copy's or a completion's work (size.go); nil for
	// a write that has none.
	sizing *leaseSizing
	// read is the fail-fast state read and the lease sought beside it.
	read stateRead
	// g ties the store request to the leases that guard it (guard.go).
	g *guard
	// outcome is the key's state the store's answer reported, in strict
	// mode (recorded.go); nil when unknown.
	outcome *dynamolease.KeyState
	// receipt is the receipt of the store's answer (receipt.go); empty
	// when none.
	receipt string
}

// stateRead is the fail-fast HEAD's state, when it was sent, and the lease
// sought beside it (nil when none was).
type stateRead struct {
	state precondition.ObjectState
	at    time.Time
	early *earlyLease
	// deferred: no state was read; the lease is taken first and its row's
	// record or a HEAD under it decides (recorded.go).
	deferred bool
}

// Run runs one write under its key's lease (SPEC §3). Once the write has
// reached the store it runs to its end whatever the client does (guard),
// and the lease is released only after the store's answer.
func (w *Writer) Run(req Request, cond Condition, send Sender) {
	lw := &write{w: w, req: req, cond: cond, send: send}
	lw.seek()
	// Fail fast (SPEC §3 step 1): no body is read for a write that cannot succeed.
	if err := lw.readState(); err != nil {
		w.abandonEarly(lw.read.early)
		send.Fail(err)
		return
	}
	lw.g = w.guardWrite(req)
	defer lw.release()
	switch {
	case sendsBody(req.Op) && bufferedBody(send.BodyLength()):
		lw.bufferHoldSend()
	case sendsBody(req.Op) && req.Mode.Kind != LeaseFirst:
		lw.sendHoldingBack()
	default:
		lw.holdThenSend()
	}
}

// seek starts what runs beside the fail-fast HEAD: the measure of a copy's
// or a completion's work, and the lease where its ETag is known without
// the state (earlyLease).
func (lw *write) seek() {
	lw.sizing = lw.w.startSizing(lw.req)
	lw.read.at = time.Now()
	if lw.acquiresFirst() {
		return // the lease is the first thing sought (recorded.go)
	}
	lw.read.early = lw.w.startEarlyLease(lw.req, lw.cond, lw.read.at)
}

// readState reads the target's state and evaluates the condition on it;
// an early lease on another ETag than the state needs is given up.
func (lw *write) readState() error {
	if lw.acquiresFirst() {
		lw.read.deferred = true
		return nil
	}
	state, err := lw.req.State.Head(lw.req.Ctx, lw.req.Target)
	if err == nil {
		err = lw.cond.Evaluate(state)
	}
	if err != nil {
		return err
	}
	if early := lw.read.early; early != nil && early.etag != lw.cond.LeaseETag(state) {
		lw.w.abandonEarly(early) // not the row this state needs; lease afresh
		lw.read.early = nil
	}
	lw.read.state = state
	return nil
}

// hold takes the write's lease (or waits for the early one) and gives it
// to the guard, which keeps it until release.
func (lw *write) hold() error {
	return lw.w.acquireGuarded(lw.req, lw.g, lw.cond, &lw.read, lw.sizing)
}

// bufferHoldSend: a small body is read and verified whole before the lease
// is used, and sent after: a write that loses the race never opens a store
// upload only to abort it (on a hot key, most do).
func (lw *write) bufferHoldSend() {
	if err := lw.send.BufferBody(); err != nil {
		lw.w.abandonEarly(lw.read.early)
		lw.send.Fail(err)
		return
	}
	if err := lw.hold(); err != nil {
		lw.send.Fail(err)
		return
	}
	lw.sendAndAnswer(lw.g.reach)
}

// sendHoldingBack: the body streams to the store while the lease is
// sought; its final byte waits for the lease and the re-check (SPEC §4),
// so the first write to finish its upload wins, as on S3. A client that
// hangs up before then leaves the store a short body, which the aborted
// request does not store.
func (lw *write) sendHoldingBack() {
	lw.sendAndAnswer(func() error {
		if err := lw.hold(); err != nil {
			return err
		}
		return lw.g.reach()
	})
}

// holdThenSend: no body, or a store that would show the upload as it
// arrives (LeaseFirst): the lease and the re-check come first, and a body
// streams under the lease.
func (lw *write) holdThenSend() {
	if err := lw.hold(); err != nil {
		lw.send.Fail(err)
		return
	}
	lw.sendAndAnswer(lw.g.reach)
}

// sendAndAnswer sends the write with beforeFinalByte as its last gate. The
// sender reports the answer read in full only once the store's answer was
// read to its end (a body that breaks off aborts the handler, and release
// then leaves the lease to expire).
func (lw *write) sendAndAnswer(beforeFinalByte func() error) {
	answered := lw.send.Send(Guard{
		Ctx:             lw.g.ctx,
		Enforced:        true,
		StoreCondition:  storeCondition(lw.req, lw.cond),
		BeforeFinalByte: beforeFinalByte,
		BeforeSuccess:   lw.g.heldThroughout,
		Answered:        lw.noteAnswerAndReceipt,
	})
	if answered {
		lw.g.answer()
	}
}

// release ends the guard: the leases are released in the background, or
// left to expire when the write's outcome is unknown.
func (lw *write) release() {
	lw.recordOutcome()
	lw.recordReceipt()
	lw.g.end()
}

func sendsBody(op operation.Operation) bool {
	return op == operation.PutObject || op == operation.CompleteMultipartUpload
}

// maxBufferedBody is the largest body a leased write reads whole before
// its lease (bufferHoldSend).
const maxBufferedBody = backendhttp.MaxBufferedPUT

// bufferedBody tells whether a body of this length is read whole before it
// is sent.
func bufferedBody(length int64) bool { return length >= 0 && length <= maxBufferedBody }
