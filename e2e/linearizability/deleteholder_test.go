package linearizability

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// deleteEntriesHold is how long the holder keeps its lease: the wait
// budget and a margin, so that a DeleteObjects that starts waiting as the
// hold begins runs out of budget within it (409), and one that starts half
// a budget before the end is answered once the holder has written.
const deleteEntriesHold = deleteEntriesBudget + 3*time.Second

// leaseHolder is the client of the DeleteObjects history that holds one
// key's lease for longer than the wait budget, so that DeleteObjects
// requests naming the key wait for it: it reads the key, then sends a CAS
// (If-Match: the ETag read) of a body larger than s3cond buffers, and
// holds the body's last bytes in the delay proxy on the way to the
// backend. s3cond takes a streamed write's lease once the client's body is
// in, re-checks the precondition and only then sends the final byte
// (proxy/leasedwrite/write.go, sendHoldingBack); while that byte waits in the proxy,
// the write is in flight at the backend and its lease is held and renewed.
// (Holding the client's body back instead holds no lease: a streamed body
// is leased once it is in, and a small body's early lease is not renewed
// while it is read, so waiters take it over after timeout × skew, within
// the budget.) Two probes send a DeleteObjects naming the key with the
// held ETag: one as the hold begins, which must answer 409 after the
// budget, and one half a budget before the hold ends, which must wait and
// then be answered on the holder's write (412).
type leaseHolder struct {
	*workloadClient
	probes [2]*deleteEntriesClient

	mu    sync.Mutex
	holds []heldLease
}

// heldLease is one hold: the key, the value whose ETag the holder's
// If-Match named, and on the recorder's clock when the lease was known
// held (s3cond had sent all but what the proxy held back, which it does
// only under the lease) and when the proxy let the rest through.
type heldLease struct {
	key, expect string
	from, until time.Duration
	answer      Outcome // the holder's
}

func (h heldLease) String() string {
	return fmt.Sprintf("%s from %q held %s-%s, CAS answered %s", h.key, h.expect, h.from.Round(time.Millisecond), h.until.Round(time.Millisecond), h.answer)
}

func (h *leaseHolder) held() []heldLease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.holds)
}

// hold reads keys until one exists and holds its lease once, retrying
// while a write moved the key before the holder's lease was taken (412)
// or someone held it for the whole budget (409). The delay proxy adds no
// latency meanwhile, so the probes' timings are the hold's.
func (h *leaseHolder) hold(ctx context.Context) {
	h.w.Cluster.Delay.SetLatency(0)
	for ctx.Err() == nil {
		key := h.w.Keys[h.rnd.IntN(len(h.w.Keys))]
		found, value, etag := h.get(key)
		if found != OutcomeOK {
			// Pacing only: the writers create the key meanwhile.
			sleepCtx(ctx, minBackoff)
			continue
		}
		if h.holdOnce(key, value, etag) {
			return
		}
	}
}

// holdOnce sends the held CAS of key from expect (whose ETag is etag) and
// reports whether its lease was held for deleteEntriesHold.
func (h *leaseHolder) holdOnce(key, expect, etag string) bool {
	c := h.w.Cluster
	in := Input{Kind: OpCAS, Key: key, Value: h.nextValue(), Expect: expect}
	body := Body(in.Value, heldBodySize)
	// The value is unique to this write, so the one backend connection
	// whose bytes carry it is this write's.
	found, stopWatch := c.Delay.Watch([]byte(in.Value + "|"))
	defer stopWatch()
	pending := h.rec.Invoke(h.id, in)
	ctx, cancel := context.WithTimeout(context.Background(), deleteEntriesHold+h.w.OpTimeout)
	defer cancel()
	endpoints := c.Endpoints()
	up := StartHeldUpload(ctx, endpoints[h.id%len(endpoints)], c.Cred, c.Bucket, key,
		http.Header{"If-Match": {etag}}, body, len(body)/2, nil)
	var at testservers.Sighting
	select {
	case at = <-found:
	case <-up.Done(): // refused before the body went on (412 on the HEAD)
		h.answered(pending, in, up)
		return false
	}
	// The final byte cannot have left s3cond: the client has not sent it.
	at.Conn.Pause()
	up.SendRest()
	select {
	case <-at.Conn.UpReached(at.Offset + int64(len(body))):
	case <-up.Done(): // the lease or the re-check refused it (409, 412)
		at.Conn.Resume()
		h.answered(pending, in, up)
		return false
	}
	from := h.rec.Elapsed()
	var probes sync.WaitGroup
	probe := func(p *deleteEntriesClient) {
		defer probes.Done()
		p.deleteObjects([]s3types.ObjectIdentifier{{Key: aws.String(key), ETag: aws.String(etag)}},
			map[string][]string{key: {expect}}, 0)
	}
	probes.Add(2)
	go probe(h.probes[0])
	// Time is the subject here: the lease is held for deleteEntriesHold,
	// and the second probe starts half a budget before its end.
	go func() {
		time.Sleep(deleteEntriesHold - deleteEntriesBudget/2)
		probe(h.probes[1])
	}()
	time.Sleep(deleteEntriesHold)
	until := h.rec.Elapsed()
	at.Conn.Resume()
	<-up.Done() // bounded by ctx
	answer := h.answered(pending, in, up)
	probes.Wait()
	h.mu.Lock()
	h.holds = append(h.holds, heldLease{key: key, expect: expect, from: from, until: until, answer: answer})
	h.mu.Unlock()
	return true
}

// answered records the answer of up, which is Done.
func (h *leaseHolder) answered(pending Pending, in Input, up *HeldUpload) Outcome {
	resp, err := up.resp, up.err
	outcome := OutcomeAmbiguous
	switch {
	case err != nil:
		h.counters.sampleAmbiguous("held cas "+in.Key, err)
	case resp.Status == http.StatusOK:
		outcome = OutcomeOK
	case resp.Status == http.StatusPreconditionFailed:
		outcome = OutcomePreconditionFailed
	case resp.Status == http.StatusConflict:
		outcome = OutcomeConflict
	case resp.Status == http.StatusNotFound && errorCode(resp) == "NoSuchKey":
		outcome = OutcomeNotFound
	case resp.Status == http.StatusServiceUnavailable && errorCode(resp) == "ServiceUnavailable" &&
		strings.Contains(string(resp.Body), "The lease store is unavailable"):
		outcome = OutcomeRefused
	case resp.Status >= 500:
		h.counters.sampleAmbiguous("held cas "+in.Key, statusError(resp))
	default:
		h.counters.unexpected("held cas "+in.Key, statusError(resp))
	}
	h.returned(pending, Output{Outcome: outcome})
	return outcome
}

func statusError(resp *e2e.RawResponse) error {
	return fmt.Errorf("status %d: %.300s", resp.Status, resp.Body)
}

func errorCode(resp *e2e.RawResponse) string {
	doc, _ := resp.Error()
	return doc.Code
}

// leaseWaitEvidence counts in rec what the holds were to produce, among
// the DeleteObjects operations on a held key naming the held ETag and sent
// while the lease was held: those answered 409 after at least the wait
// budget and before the holder let go (they waited out the budget on the
// held lease), and those answered after the holder let go without a 409
// (they waited for the lease and were judged on the state it left).
func leaseWaitEvidence(rec *Recorder, holds []heldLease) (conflictsPastBudget, waitedThenJudged int) {
	for _, op := range rec.answered() {
		if op.in.Kind != OpDeleteEntries || op.out.Outcome == OutcomeAmbiguous {
			continue
		}
		call, ret := time.Duration(op.call), time.Duration(op.ret)
		for _, h := range holds {
			if op.in.Key != h.key || !slices.Contains(op.in.Entries, h.expect) || call < h.from || call >= h.until {
				continue
			}
			conflict := slices.Contains(op.out.Entries, OutcomeConflict)
			switch {
			case conflict && ret <= h.until && ret-call >= deleteEntriesBudget:
				conflictsPastBudget++
			case !conflict && ret > h.until:
				waitedThenJudged++
			}
		}
	}
	return conflictsPastBudget, waitedThenJudged
}
