package linearizability

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
)

// Workload is the concurrent client mix that records a history.
type Workload struct {
	Cluster *Cluster
	Keys    []string
	// Clients run conditional operations: read a key, then create it if
	// missing, else CAS or delete it with the ETag read (and sometimes a
	// blind create, which should mostly get 412).
	Clients int
	// PutClients run unconditional PUTs and GETs only.
	PutClients int
	// OpTimeout is each request's client-side deadline (default 5 s).
	OpTimeout time.Duration
	// BodySize pads every value to this many bytes (default 64).
	BodySize int
	// Pace sleeps between a client's operations (default none).
	Pace time.Duration
	// AbandonOneIn, if set, makes about one write in this many hang up
	// half-way through its body (abandon.go): an ambiguous write whose
	// truncated body the store must not keep.
	AbandonOneIn int
	// WholeBodies counts a GET whose body is not BodySize bytes as garbled:
	// a truncated upload is no value any client wrote.
	WholeBodies bool
	// CopyOneIn, if set, makes about one create or CAS in this many a
	// CopyObject of a source holding the value (copyworkload.go).
	CopyOneIn int
	// NoDeletes leaves DeleteObject out (a store served natively whose
	// DeleteObject If-Match is not, as versitygw's on a missing key).
	NoDeletes bool
	// DeleteConditions sends every delete with x-amz-if-match-size too
	// (BodySize: it holds whenever If-Match does), and every other one as
	// a DeleteObjects of one entry ETag: the operations a lease-free plan
	// reduces to DeleteObject If-Match (leasefree_test.go).
	DeleteConditions bool
	// Completes makes about one create or CAS in four a multipart upload
	// of one part completed with the same condition (completewrite.go).
	Completes bool
	// NewClient, if set, makes client id's S3 client instead of
	// Cluster.Client (lostanswer.go: a network that loses answers).
	NewClient func(id int, timeout time.Duration) *s3.Client
}

// Counters are what the workload saw that the model does not check.
type Counters struct {
	// Unexpected counts answers outside the contract (4xx other than 404,
	// 409 and 412); each is also recorded as ambiguous.
	Unexpected atomic.Int64
	// Garbled counts GET bodies that are no value any client wrote.
	Garbled atomic.Int64
	// TornReads counts GET bodies of the wrong length from s3rver, which
	// overwrites files in place; each is recorded as ambiguous.
	TornReads atomic.Int64
	mu        sync.Mutex
	samples   []string
	ambiguous []string
}

func (c *Counters) sampleAmbiguous(op string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ambiguous) < 5 {
		c.ambiguous = append(c.ambiguous, fmt.Sprintf("%s: %v", op, err))
	}
}

// AmbiguousSamples are a few of the errors recorded as ambiguous.
func (c *Counters) AmbiguousSamples() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ambiguous...)
}

func (c *Counters) unexpected(op string, err error) {
	c.Unexpected.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.samples) < 5 {
		c.samples = append(c.samples, fmt.Sprintf("%s: %v", op, err))
	}
}

// Samples are a few of the unexpected answers, for the failure message.
func (c *Counters) Samples() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.samples...)
}

// Run records operations into rec until ctx ends, then waits for the
// operations in flight.
func (w Workload) Run(ctx context.Context, rec *Recorder) *Counters {
	if w.OpTimeout == 0 {
		w.OpTimeout = 5 * time.Second
	}
	if w.BodySize == 0 {
		w.BodySize = 64
	}
	counters := &Counters{}
	var wg sync.WaitGroup
	for i := 0; i < w.Clients+w.PutClients; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			newClient := w.Cluster.Client
			if w.NewClient != nil {
				newClient = w.NewClient
			}
			wc := &workloadClient{w: w, id: id, rec: rec, counters: counters,
				s3: newClient(id, w.OpTimeout), rnd: rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))}
			conditional := id < w.Clients
			for ctx.Err() == nil {
				if conditional {
					wc.conditionalRound(ctx)
				} else {
					wc.putRound(ctx)
				}
				pause := w.Pace + wc.backoff.next(wc.lastAmbiguous)
				if pause > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(pause):
					}
				}
			}
		}(i)
	}
	wg.Wait()
	return counters
}

type workloadClient struct {
	w        Workload
	id       int
	rec      *Recorder
	counters *Counters
	s3       *s3.Client
	rnd      *rand.Rand

	lastAmbiguous bool
	backoff       backoff
}

// backoff is how a client slows down while its answers are ambiguous, as
// real clients back off on 503s. It also keeps the history checkable:
// every ambiguous operation stays open until the end, and hundreds of them
// from a tight retry loop during an outage make porcupine's search explode.
type backoff struct{ current time.Duration }

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

func (b *backoff) next(ambiguous bool) time.Duration {
	if !ambiguous {
		b.current = 0
		return 0
	}
	b.current = min(max(2*b.current, minBackoff), maxBackoff)
	return b.current
}

// opContext is independent of the run's context: an operation started
// before the run ended finishes (or times out) normally, so the end of the
// run does not turn answers into ambiguous outcomes.
func (c *workloadClient) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.w.OpTimeout)
}

func (c *workloadClient) conditionalRound(ctx context.Context) {
	c.lastAmbiguous = false
	key := c.w.Keys[c.rnd.IntN(len(c.w.Keys))]
	if c.rnd.IntN(10) == 0 {
		c.create(key)
		return
	}
	found, value, etag := c.get(key)
	if ctx.Err() != nil {
		return
	}
	switch {
	case found == OutcomeNotFound && c.w.Completes && c.rnd.IntN(4) == 0:
		c.complete(key, "", "")
	case found == OutcomeNotFound:
		c.create(key)
	case found == OutcomeOK && !c.w.NoDeletes && c.rnd.IntN(5) == 0:
		c.delete(key, value, etag)
	case found == OutcomeOK && c.w.Completes && c.rnd.IntN(4) == 0:
		c.complete(key, value, etag)
	case found == OutcomeOK:
		c.cas(key, value, etag)
	}
}

func (c *workloadClient) putRound(ctx context.Context) {
	c.lastAmbiguous = false
	key := c.w.Keys[c.rnd.IntN(len(c.w.Keys))]
	if c.rnd.IntN(2) == 0 {
		c.get(key)
		return
	}
	c.put(key)
}

// nextValue is unique across clients and workload runs on one recorder.
func (c *workloadClient) nextValue() string {
	return fmt.Sprintf("c%02d-%06d", c.id, c.rec.nextSeq())
}

// Body renders a value as an object body: the value, '|', padding.
func Body(value string, size int) []byte {
	b := []byte(value + "|")
	for len(b) < size {
		b = append(b, byte('a'+len(b)%26))
	}
	return b
}

// ValueOf is the value a body holds (the inverse of Body).
func ValueOf(body []byte) (string, bool) {
	value, _, ok := strings.Cut(string(body), "|")
	return value, ok && value != ""
}

func (c *workloadClient) get(key string) (Outcome, string, string) {
	pending := c.rec.Invoke(c.id, Input{Kind: OpGet, Key: key})
	ctx, cancel := c.opContext()
	defer cancel()
	resp, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.w.Cluster.Bucket), Key: aws.String(key)})
	if err != nil {
		outcome, unexpected := classify(err)
		if unexpected {
			c.counters.unexpected("get "+key, err)
		}
		c.returned(pending, Output{Outcome: outcome})
		return outcome, "", ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.returned(pending, Output{Outcome: OutcomeAmbiguous})
		return OutcomeAmbiguous, "", ""
	}
	if c.w.Cluster.Store.Kind == e2e.BackendS3rver && len(body) != c.w.BodySize {
		// s3rver overwrites files in place: a GET racing an overwrite can
		// return a short or empty body, a torn read (the store's defect,
		// not s3cond's), which tells nothing about the key's value.
		c.counters.TornReads.Add(1)
		c.returned(pending, Output{Outcome: OutcomeAmbiguous})
		return OutcomeAmbiguous, "", ""
	}
	value, ok := ValueOf(body)
	if c.w.WholeBodies && len(body) != c.w.BodySize {
		ok = false
	}
	if !ok {
		c.counters.Garbled.Add(1)
		value = "garbled:" + string(body)
	}
	c.returned(pending, Output{Outcome: OutcomeOK, Value: value})
	if isMultipartBody(body) && c.w.Cluster.Store.Kind != faultyStore {
		// The store's ETag of an object a completion wrote (gofakes3, the
		// faulty stores' base, keeps a completed object's MD5 instead).
		return OutcomeOK, value, onePartUploadETag(body)
	}
	return OutcomeOK, value, bodyETag(body)
}

// bodyETag is the ETag of a body stored by one PutObject: its MD5, quoted.
// The client expects this ETag rather than the GET's ETag header because
// versitygw reads that header and the object data at different moments: a
// GET racing an overwrite can pair the new body with the previous ETag
// (read from the ETag attribute by path before the data file is opened),
// and a CAS sent with it would fail against the very value the client read.
// Amazon S3's GET is atomic; the checker must judge s3cond, not that race.
func bodyETag(body []byte) string {
	sum := md5.Sum(body)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func (c *workloadClient) write(in Input, input *s3.PutObjectInput) {
	pending := c.rec.Invoke(c.id, in)
	input.Bucket, input.Key = aws.String(c.w.Cluster.Bucket), aws.String(in.Key)
	input.Body = bytes.NewReader(Body(in.Value, c.w.BodySize))
	ctx, cancel := c.opContext()
	defer cancel()
	if c.w.AbandonOneIn > 0 && c.rnd.IntN(c.w.AbandonOneIn) == 0 {
		c.finish(pending, in, c.abandonedWrite(ctx, cancel, in.Key, input, Body(in.Value, c.w.BodySize)))
		return
	}
	_, err := c.s3.PutObject(ctx, input)
	c.finish(pending, in, err)
}

func (c *workloadClient) finish(pending Pending, in Input, err error) {
	outcome, unexpected := classify(err)
	if unexpected {
		c.counters.unexpected(fmt.Sprintf("%s %s", in.Kind, in.Key), err)
	} else if outcome == OutcomeAmbiguous {
		c.counters.sampleAmbiguous(fmt.Sprintf("%s %s", in.Kind, in.Key), err)
	}
	c.returned(pending, Output{Outcome: outcome})
}

func (c *workloadClient) returned(pending Pending, out Output) {
	if out.Outcome == OutcomeAmbiguous {
		c.lastAmbiguous = true
	}
	pending.Return(out)
}

func (c *workloadClient) create(key string) {
	if c.copies() {
		c.copyWrite(Input{Kind: OpCopy, Key: key, Value: c.nextValue()}, "")
		return
	}
	c.write(Input{Kind: OpCreate, Key: key, Value: c.nextValue()}, &s3.PutObjectInput{IfNoneMatch: aws.String("*")})
}

func (c *workloadClient) cas(key, expect, etag string) {
	if c.copies() {
		c.copyWrite(Input{Kind: OpCopy, Key: key, Value: c.nextValue(), Expect: expect}, etag)
		return
	}
	c.write(Input{Kind: OpCAS, Key: key, Value: c.nextValue(), Expect: expect}, &s3.PutObjectInput{IfMatch: aws.String(etag)})
}

func (c *workloadClient) put(key string) {
	c.write(Input{Kind: OpPut, Key: key, Value: c.nextValue()}, &s3.PutObjectInput{})
}

func (c *workloadClient) delete(key, expect, etag string) {
	in := Input{Kind: OpDelete, Key: key, Expect: expect}
	if c.w.DeleteConditions && c.rnd.IntN(2) == 0 {
		c.deleteEntry(in, etag)
		return
	}
	pending := c.rec.Invoke(c.id, in)
	ctx, cancel := c.opContext()
	defer cancel()
	input := &s3.DeleteObjectInput{Bucket: aws.String(c.w.Cluster.Bucket), Key: aws.String(key), IfMatch: aws.String(etag)}
	if c.w.DeleteConditions {
		input.IfMatchSize = aws.Int64(int64(c.w.BodySize))
	}
	_, err := c.s3.DeleteObject(ctx, input)
	c.finish(pending, in, err)
}
