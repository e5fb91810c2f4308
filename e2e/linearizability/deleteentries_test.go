package linearizability

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/internal/testservers"
)

// deleteEntriesLease is the lease timeout of the DeleteObjects history:
// shorter than a write through the slowed backend (a HEAD and a PUT, each
// twice the latency), so every holder renews. The wait budget is longer
// than timeout × skew (3 s): a DeleteObjects leasing its keys one after
// another must renew the leases it took first while it waits for the
// others, or a waiter takes them over and writes, and the half-lease rule
// decides whether it may still send the delete.
const (
	deleteEntriesLease   = 1500 * time.Millisecond
	deleteEntriesBudget  = 4 * time.Second
	deleteEntriesLatency = 400 * time.Millisecond
	deleteEntriesStall   = 3 * time.Second
	deleteEntriesClients = 3
	deleteWriterClients  = 5
)

// TestLinearizableDeleteObjectsWithRepeatsAndLongLeaseWaits records
// DeleteObjects requests whose entries carry ETags, name keys several times
// (the same ETag again, or an older one) and wait for leases other writers
// hold through a slowed backend, among creates, CASes, deletes and reads of
// the same keys. A holder (leaseHolder) keeps one key's lease past the
// wait budget, so that DeleteObjects naming it wait out the budget and
// answer 409, or wait and are answered once it wrote; the history must
// show both. Each request's entries for one key are one operation: the
// key is leased once for all of them, deleted if one entry's ETag holds,
// and every entry answered on that state (deleted, 412, 404), or all 409.
// Before DeleteObjects renewed its leases and folded repeats (issue 14,
// items 2 and 3), a repeat waited out the budget against the request's own
// lease and answered 409, and the delete was sent under an expired lease,
// erasing a CAS acknowledged meanwhile.
//
// It runs on each lease store, since each takes a request's leases in
// batches of its own kind (one bbolt commit, one DynamoDB transaction, one
// etcd transaction): the embedded one with one s3cond, DynamoDB (moto) and
// etcd with two.
func TestLinearizableDeleteObjectsWithRepeatsAndLongLeaseWaits(t *testing.T) {
	for _, store := range deleteEntriesStores(t) {
		t.Run(store.name, func(t *testing.T) {
			rec := recordDeleteObjects(t, store.opts(), store.recording, true)
			RequireLinearizable(t, rec)
		})
	}
}

// deleteEntriesStore is one lease store the DeleteObjects history runs on;
// recording is how long it records (moto serves one request at a time, so
// the fleets record longer for as thick a history).
type deleteEntriesStore struct {
	name      string
	opts      func() ClusterOptions
	recording time.Duration
}

func deleteEntriesStores(t *testing.T) []deleteEntriesStore {
	return []deleteEntriesStore{
		{"embedded", func() ClusterOptions { return ClusterOptions{} }, 14 * time.Second},
		{"dynamodb", func() ClusterOptions {
			return ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()}
		}, 20 * time.Second},
		{"etcd", func() ClusterOptions { return ClusterOptions{Proxies: 2, Etcd: testservers.StartEtcdCluster(t)} }, 20 * time.Second},
	}
}

// recordDeleteObjects records the DeleteObjects history on a cluster of
// opts, checks what it can without the checker, and returns it.
// waitsExpected requires the history to show DeleteObjects waiting on the
// lease the holder held past the budget (leaseWaitEvidence): a protocol
// that never waits, the negative control's, does not.
func recordDeleteObjects(t *testing.T, opts ClusterOptions, recording time.Duration, waitsExpected bool) *Recorder {
	opts.DelayBackend, opts.LeaseTimeout = true, deleteEntriesLease
	// Bodies travel unframed here: the holder (deleteholder_test.go) knows
	// its CAS holds the lease once the body's last byte reached the delay
	// proxy, counted from where its value was seen; an aws-chunked stream
	// (framing, on by default for versitygw) puts chunk headers among those
	// bytes, so that count is reached before s3cond has read the body's end
	// and sought the lease, and the probes find no lease to wait on. The
	// framed path is raced by the FIN-hop suites.
	opts.Env = append(opts.Env, "S3COND_LEASE_WAIT_BUDGET="+deleteEntriesBudget.String(), "S3COND_BACKEND_CONDITIONAL_BODY_FRAMING=none")
	c := NewCluster(t, opts)
	w := Workload{Cluster: c, Keys: threeKeys, Clients: deleteWriterClients, OpTimeout: 20 * time.Second, BodySize: 64}
	rec := NewRecorder()
	counters := &Counters{}
	ctx, stop := context.WithTimeout(context.Background(), recordingTime(t, recording))
	defer stop()
	var wg sync.WaitGroup
	var writerCounters *Counters
	wg.Add(1)
	go func() {
		defer wg.Done()
		writerCounters = w.Run(ctx, rec)
	}()
	stats := &deleteEntriesStats{}
	newDeleter := func(id int) *deleteEntriesClient {
		return &deleteEntriesClient{workloadClient: newWorkloadClient(w, id, rec, counters), seen: map[string][]seenValue{}, stats: stats}
	}
	holderID := deleteWriterClients + deleteEntriesClients
	holder := &leaseHolder{workloadClient: newWorkloadClient(w, holderID, rec, counters),
		probes: [2]*deleteEntriesClient{newDeleter(holderID + 1), newDeleter(holderID + 2)}}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A hold of one key's lease past the wait budget (leaseHolder);
		// then a slow phase and a stall: every backend request waits in
		// the delay proxy while its writer holds (and renews) its lease,
		// so whoever wants the key waits; then a fast phase in which the
		// history grows.
		for ctx.Err() == nil {
			holder.hold(ctx)
			c.Delay.SetLatency(deleteEntriesLatency)
			sleepCtx(ctx, 2*time.Second)
			c.Delay.Pause()
			sleepCtx(ctx, deleteEntriesStall)
			c.Delay.Resume()
			c.Delay.SetLatency(0)
			sleepCtx(ctx, time.Second)
		}
		c.Delay.SetLatency(0)
	}()
	for i := 0; i < deleteEntriesClients; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			dc := newDeleter(id)
			for ctx.Err() == nil {
				dc.round()
				if pause := dc.backoff.next(dc.lastAmbiguous); pause > 0 {
					sleepCtx(ctx, pause)
				}
			}
		}(deleteWriterClients + i)
	}
	wg.Wait()
	for _, cs := range []*Counters{counters, writerCounters} {
		if n := cs.Unexpected.Load(); n > 0 {
			t.Errorf("%d answers outside the contract, e.g. %q", n, cs.Samples())
		}
		if n := cs.Garbled.Load(); n > 0 {
			t.Errorf("%d GETs returned a body no client wrote", n)
		}
	}
	t.Logf("DeleteObjects: %s", stats)
	if stats.split > 0 {
		t.Errorf("%d keys had entries answered apart in one request (409 beside other answers, or one ETag answered two ways)", stats.split)
	}
	if stats.requests < 5 || stats.repeats < 5 || stats.deleted == 0 {
		t.Fatalf("too thin a history to judge DeleteObjects: %s", stats)
	}
	holds := holder.held()
	conflicts, judged := leaseWaitEvidence(rec, holds)
	t.Logf("%d holds of a lease past the wait budget %v; DeleteObjects on a held key: %d answered 409 after the budget, %d waited and were answered on the holder's write", len(holds), holds, conflicts, judged)
	if waitsExpected && (len(holds) == 0 || conflicts == 0 || judged == 0) {
		t.Fatalf("the history does not show DeleteObjects waiting on a held lease: it needs a hold, a request answered 409 after the budget and one answered without 409 after waiting (%d, %d, %d)", len(holds), conflicts, judged)
	}
	requireProgress(t, rec, 10)
	return rec
}

// deleteEntriesStats is what the DeleteObjects clients sent and got.
type deleteEntriesStats struct {
	mu                                    sync.Mutex
	requests, entries, repeats            int
	deleted, failed, conflicts, ambiguous int
	// split counts keys whose entries in one request were answered apart:
	// 409 beside other answers, or one ETag repeated and answered two ways
	// (a repeat that waited for the request's own lease, or was judged
	// after its twin's delete), where S3 answers every entry at once.
	split   int
	slowest time.Duration
}

func (s *deleteEntriesStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d requests of %d entries (%d naming a key again); answers: %d deleted, %d 412/404, %d 409, %d unknown; %d keys split; slowest request %s",
		s.requests, s.entries, s.repeats, s.deleted, s.failed, s.conflicts, s.ambiguous, s.split, s.slowest)
}

func (s *deleteEntriesStats) add(entries, repeats int, took time.Duration, outcomes []Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.entries += entries
	s.repeats += repeats
	s.slowest = max(s.slowest, took)
	for _, o := range outcomes {
		switch o {
		case OutcomeOK:
			s.deleted++
		case OutcomeConflict:
			s.conflicts++
		case OutcomeAmbiguous:
			s.ambiguous++
		default:
			s.failed++
		}
	}
}

// deleteEntriesClient reads one to three keys and deletes them in one
// DeleteObjects whose entries carry the ETags read, some twice, some with
// an ETag the key held earlier, in shuffled order (a key's repeats are not
// adjacent).
type deleteEntriesClient struct {
	*workloadClient
	seen  map[string][]seenValue // values read per key, oldest first
	stats *deleteEntriesStats
}

// seenValue is a value read and the ETag of the body it was read in (the
// holder's bodies are larger than the workload's).
type seenValue struct{ value, etag string }

func (c *deleteEntriesClient) round() {
	c.lastAmbiguous = false
	var objs []s3types.ObjectIdentifier
	expects := map[string][]string{}
	repeats := 0
	for _, key := range c.pickKeys() {
		found, value, etag := c.get(key)
		read := seenValue{value, etag}
		if found == OutcomeOK {
			c.seen[key] = append(c.seen[key], read)
		}
		var sends []seenValue
		if found == OutcomeOK {
			sends = append(sends, read)
			if c.rnd.IntN(2) == 0 {
				sends = append(sends, read)
			}
		}
		if older := c.seen[key]; len(older) > 1 && c.rnd.IntN(3) == 0 {
			sends = append(sends, older[c.rnd.IntN(len(older)-1)])
		}
		var values []string
		for _, v := range sends {
			objs = append(objs, s3types.ObjectIdentifier{Key: aws.String(key), ETag: aws.String(v.etag)})
			values = append(values, v.value)
		}
		expects[key] = values
		if len(values) > 1 {
			repeats += len(values) - 1
		}
	}
	if len(objs) == 0 {
		return
	}
	c.rnd.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
	c.deleteObjects(objs, expects, repeats)
}

func (c *deleteEntriesClient) pickKeys() []string {
	keys := append([]string(nil), c.w.Keys...)
	c.rnd.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys[:1+c.rnd.IntN(len(keys))]
}

// deleteObjects sends objs and records, per key, one operation whose
// entries are judged together.
func (c *deleteEntriesClient) deleteObjects(objs []s3types.ObjectIdentifier, expects map[string][]string, repeats int) {
	pending := map[string]Pending{}
	for key, values := range expects {
		if len(values) > 0 {
			pending[key] = c.rec.Invoke(c.id, Input{Kind: OpDeleteEntries, Key: key, Entries: values})
		}
	}
	ctx, cancel := c.opContext()
	defer cancel()
	start := time.Now()
	out, err := c.s3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(c.w.Cluster.Bucket),
		Delete: &s3types.Delete{Objects: objs}})
	took := time.Since(start)
	answers := map[string][]Outcome{}
	if err == nil {
		for _, d := range out.Deleted {
			answers[aws.ToString(d.Key)] = append(answers[aws.ToString(d.Key)], OutcomeOK)
		}
		for _, e := range out.Errors {
			answers[aws.ToString(e.Key)] = append(answers[aws.ToString(e.Key)], c.entryOutcome(e))
		}
	}
	var all []Outcome
	for key, p := range pending {
		got := answers[key]
		result := Output{Outcome: OutcomeAmbiguous}
		switch {
		case err != nil:
			if outcome, unexpected := classify(err); unexpected || outcome != OutcomeAmbiguous {
				c.counters.unexpected("DeleteObjects", err)
			}
		case len(got) != len(expects[key]):
			c.counters.unexpected("DeleteObjects "+key, fmt.Errorf("%d answers for %d entries: %v", len(got), len(expects[key]), got))
		case slices.Contains(got, OutcomeAmbiguous):
		default:
			result = Output{Outcome: summary(got), Entries: got}
			if answeredApart(expects[key], got) {
				c.stats.addSplit()
			}
		}
		c.returned(p, result)
		if result.Entries == nil {
			all = append(all, OutcomeAmbiguous)
		}
		all = append(all, result.Entries...)
	}
	c.stats.add(len(objs), repeats, took, all)
}

func (s *deleteEntriesStats) addSplit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.split++
}

// answeredApart tells answers to one key's entries that no single judgment
// gives: 409 beside other answers, or differing answers to entries that all
// name one ETag.
func answeredApart(expects []string, got []Outcome) bool {
	if slices.Contains(got, OutcomeConflict) && slices.ContainsFunc(got, func(o Outcome) bool { return o != OutcomeConflict }) {
		return true
	}
	sameETag := !slices.ContainsFunc(expects, func(e string) bool { return e != expects[0] })
	return sameETag && slices.ContainsFunc(got, func(o Outcome) bool { return o != got[0] })
}

// entryOutcome is the outcome of one <Error> entry.
func (c *deleteEntriesClient) entryOutcome(e s3types.Error) Outcome {
	switch code := aws.ToString(e.Code); code {
	case "PreconditionFailed":
		return OutcomePreconditionFailed
	case "NoSuchKey":
		return OutcomeNotFound
	case "ConditionalRequestConflict":
		return OutcomeConflict
	default:
		c.counters.unexpected("DeleteObjects entry "+aws.ToString(e.Key), fmt.Errorf("%s: %s", code, aws.ToString(e.Message)))
		return OutcomeAmbiguous
	}
}

// summary is one key's outcome: deleted if any entry was, else the first
// entry's answer (the model checks every entry's).
func summary(entries []Outcome) Outcome {
	for _, o := range entries {
		if o == OutcomeOK {
			return OutcomeOK
		}
	}
	return entries[0]
}
