package linearizability

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/e2e"
)

// hangUpSourceSize makes a CopyObject, and a CompleteMultipartUpload of a
// small first part and the source as second part, take versitygw (posix)
// hundreds of milliseconds: long enough for a client to hang up while the
// backend writes. The test logs the direct durations, and times the
// hang-ups by them.
const (
	hangUpSourceSize = 160 << 20
	hangUpFirstPart  = 5 << 20 // S3's minimum part size
	hangUpKeyClients = 3
	hangUpBigClients = 3
	srcKey           = "src"
	srcValue         = "src-value"
)

var hangUpKeys = []string{"k1", "k2"}

// TestLinearizableWhenClientsHangUpDuringConditionalCopyAndComplete records
// conditional CopyObject (from a large source) and CompleteMultipartUpload
// (of a large upload), with If-None-Match: * or If-Match, half of whose
// clients hang up at a random moment while versitygw writes, among creates,
// compare-and-swaps, deletes and reads of the same keys. A hung-up write is
// ambiguous: versitygw finishes it anyway, so it may take effect at any time
// after its call. Before s3cond kept the lease until the backend's answer
// (proxy/leasedwrite/guard.go), a hang-up freed the key at once: another create got 200
// and was then overwritten by the abandoned copy (issue 14, item 1), which no
// linearization explains.
func TestLinearizableWhenClientsHangUpDuringConditionalCopyAndComplete(t *testing.T) {
	c := NewCluster(t, ClusterOptions{})
	big := newBigValues(t, c)
	w := Workload{Cluster: c, Keys: hangUpKeys, OpTimeout: 15 * time.Second, BodySize: 64}
	rec := NewRecorder()
	var hangUps, landed atomic.Int64
	counters := &Counters{}
	ctx, stop := context.WithTimeout(context.Background(), recordingTime(t, 20*time.Second))
	defer stop()
	var wg sync.WaitGroup
	for id := 0; id < hangUpKeyClients+hangUpBigClients; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &hangUpClient{workloadClient: newWorkloadClient(w, id, rec, counters), big: big,
				bigWriter: id >= hangUpKeyClients, hangUps: &hangUps, landed: &landed}
			for ctx.Err() == nil {
				hc.round()
				if pause := hc.backoff.next(hc.lastAmbiguous); pause > 0 {
					sleepCtx(ctx, pause)
				}
			}
		}()
	}
	wg.Wait()
	if n := counters.Unexpected.Load(); n > 0 {
		t.Errorf("%d answers outside the contract, e.g. %q", n, counters.Samples())
	}
	if n := counters.Garbled.Load(); n > 0 {
		t.Errorf("%d GETs returned a body no client wrote", n)
	}
	stats := rec.Stats()
	t.Logf("%d copies and %d completes; %d hung up mid-write, %d answered before their hang-up",
		stats.ByKind[OpCopy], stats.ByKind[OpComplete], hangUps.Load(), landed.Load())
	if stats.ByKind[OpCopy] == 0 || stats.ByKind[OpComplete] == 0 {
		t.Fatal("the history holds no copy or no complete")
	}
	if hangUps.Load() < 3 {
		t.Fatalf("only %d clients hung up mid-write: the fault was not injected", hangUps.Load())
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// newWorkloadClient is client id of w, recording into rec.
func newWorkloadClient(w Workload, id int, rec *Recorder, counters *Counters) *workloadClient {
	return &workloadClient{w: w, id: id, rec: rec, counters: counters, s3: w.Cluster.Client(id, w.OpTimeout),
		rnd: rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))}
}

// bigValues are the large objects of the test: the copy source, and the
// ETag each large value has once written (multipart ETags are no MD5 of
// the body, so a client cannot compute them from what it read).
type bigValues struct {
	c       *Cluster
	backend *s3.Client
	// copyTook and completeTook are how long versitygw takes directly.
	copyTook, completeTook time.Duration

	mu    sync.Mutex
	etags map[string]string
}

func newBigValues(t *testing.T, c *Cluster) *bigValues {
	t.Helper()
	b := &bigValues{c: c, backend: e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil), etags: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := b.backend.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(srcKey),
		Body: bytes.NewReader(bigBody(srcValue, hangUpSourceSize)), ContentLength: aws.Int64(hangUpSourceSize)}); err != nil {
		t.Fatalf("put the copy source: %v", err)
	}
	start := time.Now()
	out, err := b.backend.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String("baseline-copy"),
		CopySource: aws.String(c.Bucket + "/" + srcKey)})
	if err != nil {
		t.Fatalf("direct copy: %v", err)
	}
	b.copyTook = time.Since(start)
	b.etags[srcValue] = aws.ToString(out.CopyObjectResult.ETag)
	upload, err := b.prepareUpload(ctx, "baseline-complete", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := b.backend.CompleteMultipartUpload(ctx, upload); err != nil {
		t.Fatalf("direct complete: %v", err)
	}
	b.completeTook = time.Since(start)
	// Logged, not required: one sample swings tenfold with the page cache
	// and the machine's load. The test requires hang-ups instead.
	t.Logf("versitygw takes %s for the copy and %s for the complete directly", b.copyTook, b.completeTook)
	return b
}

// bigBody is a body of size bytes whose value (ValueOf) is value.
func bigBody(value string, size int) []byte {
	b := make([]byte, size)
	copy(b, Body(value, 64))
	return b
}

// prepareUpload starts a multipart upload of key on the backend whose
// object will hold value: a first part of its own (the value), then the
// copy source as second part, copied by versitygw. The parts are made on
// the backend directly: only the Complete is under test.
func (b *bigValues) prepareUpload(ctx context.Context, key, value string) (*s3.CompleteMultipartUploadInput, error) {
	bucket := aws.String(b.c.Bucket)
	up, err := b.backend.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("create upload: %w", err)
	}
	first, err := b.backend.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: aws.String(key), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(bigBody(value, hangUpFirstPart)), ContentLength: aws.Int64(hangUpFirstPart)})
	if err != nil {
		return nil, fmt.Errorf("upload part 1: %w", err)
	}
	second, err := b.backend.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: bucket, Key: aws.String(key), UploadId: up.UploadId,
		PartNumber: aws.Int32(2), CopySource: aws.String(b.c.Bucket + "/" + srcKey)})
	if err != nil {
		return nil, fmt.Errorf("upload part 2 (copy): %w", err)
	}
	parts := []s3types.CompletedPart{{ETag: first.ETag, PartNumber: aws.Int32(1)},
		{ETag: second.CopyPartResult.ETag, PartNumber: aws.Int32(2)}}
	etag, err := multipartETag(parts)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.etags[value] = etag
	b.mu.Unlock()
	return &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: aws.String(key), UploadId: up.UploadId,
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts}}, nil
}

// multipartETag is S3's ETag of a completed upload: the MD5 of its parts'
// binary MD5s, a dash, and the number of parts.
func multipartETag(parts []s3types.CompletedPart) (string, error) {
	var sums []byte
	for _, p := range parts {
		raw, err := hex.DecodeString(strings.Trim(aws.ToString(p.ETag), `"`))
		if err != nil {
			return "", fmt.Errorf("part ETag %s: %w", aws.ToString(p.ETag), err)
		}
		sums = append(sums, raw...)
	}
	sum := md5.Sum(sums)
	return fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(sum[:]), len(parts)), nil
}

// etagOf is the ETag of value as stored: a large value's recorded one, else
// the MD5 of its small body.
func (b *bigValues) etagOf(value string, bodySize int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if etag, ok := b.etags[value]; ok {
		return etag
	}
	return bodyETag(Body(value, bodySize))
}

// hangUpClient reads the start of a key and then creates, CASes or deletes
// it with a small body, or (bigWriter) copies the source onto it or
// completes an upload of it, conditionally, hanging up half the time.
type hangUpClient struct {
	*workloadClient
	big       *bigValues
	bigWriter bool
	hangUps   *atomic.Int64
	landed    *atomic.Int64
}

func (c *hangUpClient) round() {
	c.lastAmbiguous = false
	key := c.w.Keys[c.rnd.IntN(len(c.w.Keys))]
	found, value := c.readValue(key)
	expect, etag := "", ""
	switch found {
	case OutcomeOK:
		expect, etag = value, c.big.etagOf(value, c.w.BodySize)
	case OutcomeNotFound:
	default:
		return
	}
	switch {
	case c.bigWriter && c.rnd.IntN(2) == 0:
		c.copyOnto(key, expect, etag)
	case c.bigWriter:
		c.complete(key, expect, etag)
	case expect == "":
		c.create(key)
	case c.rnd.IntN(3) == 0:
		c.delete(key, expect, etag)
	default:
		c.cas(key, expect, etag)
	}
}

// readValue GETs the first bytes of key, which name its value: the objects
// are large, and their ETags are known by value (bigValues.etagOf).
func (c *hangUpClient) readValue(key string) (Outcome, string) {
	pending := c.rec.Invoke(c.id, Input{Kind: OpGet, Key: key})
	ctx, cancel := c.opContext()
	defer cancel()
	resp, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.w.Cluster.Bucket), Key: aws.String(key),
		Range: aws.String("bytes=0-63")})
	if err != nil {
		outcome, unexpected := classify(err)
		if unexpected {
			c.counters.unexpected("get "+key, err)
		}
		c.returned(pending, Output{Outcome: outcome})
		return outcome, ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.returned(pending, Output{Outcome: OutcomeAmbiguous})
		return OutcomeAmbiguous, ""
	}
	value, ok := ValueOf(body)
	if !ok {
		c.counters.Garbled.Add(1)
		value = "garbled:" + string(body)
	}
	c.returned(pending, Output{Outcome: OutcomeOK, Value: value})
	return OutcomeOK, value
}

func conditionOf(expect, etag string) (ifMatch, ifNoneMatch *string) {
	if expect == "" {
		return nil, aws.String("*")
	}
	return aws.String(etag), nil
}

func (c *hangUpClient) copyOnto(key, expect, etag string) {
	in := Input{Kind: OpCopy, Key: key, Value: srcValue, Expect: expect}
	ifMatch, ifNoneMatch := conditionOf(expect, etag)
	_ = c.maybeHangingUp(in, c.big.copyTook, func(ctx context.Context) (string, error) {
		out, err := c.s3.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(c.w.Cluster.Bucket), Key: aws.String(key),
			CopySource: aws.String(c.w.Cluster.Bucket + "/" + srcKey), IfMatch: ifMatch, IfNoneMatch: ifNoneMatch})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.CopyObjectResult.ETag), nil
	})
}

func (c *hangUpClient) complete(key, expect, etag string) {
	value := c.nextValue()
	ctx, cancel := c.opContext()
	defer cancel()
	upload, err := c.big.prepareUpload(ctx, key, value)
	if err != nil {
		c.counters.unexpected("prepare upload of "+key, err)
		return
	}
	upload.IfMatch, upload.IfNoneMatch = conditionOf(expect, etag)
	in := Input{Kind: OpComplete, Key: key, Value: value, Expect: expect}
	outcome := c.maybeHangingUp(in, c.big.completeTook, func(ctx context.Context) (string, error) {
		out, err := c.s3.CompleteMultipartUpload(ctx, upload)
		if err != nil {
			return "", err
		}
		return aws.ToString(out.ETag), nil
	})
	if outcome != OutcomeOK && outcome != OutcomeAmbiguous {
		// Refused: its 165 MiB of parts would stay on disk until the test ends.
		_, _ = c.big.backend.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: upload.Bucket, Key: upload.Key,
			UploadId: upload.UploadId})
	}
}

// maybeHangingUp runs write as operation in; half the time the client hangs
// up (cancels the request, closing its connection) after a random part of
// took, the backend's own duration for such a write, so it leaves while
// versitygw writes. A write that answers first is recorded as answered.
// It returns the outcome recorded.
func (c *hangUpClient) maybeHangingUp(in Input, took time.Duration, write func(ctx context.Context) (string, error)) Outcome {
	ctx, cancel := c.opContext()
	defer cancel()
	hangUp := c.rnd.IntN(2) == 0
	if hangUp {
		after := 20*time.Millisecond + time.Duration(c.rnd.Int64N(int64(took)))
		timer := time.AfterFunc(after, cancel)
		defer timer.Stop()
	}
	pending := c.rec.Invoke(c.id, in)
	etag, err := write(ctx)
	if hangUp && errors.Is(err, context.Canceled) {
		c.hangUps.Add(1)
		c.returned(pending, Output{Outcome: OutcomeAmbiguous})
		return OutcomeAmbiguous
	}
	if hangUp {
		c.landed.Add(1)
	}
	if want := c.big.etagOf(in.Value, c.w.BodySize); err == nil && etag != want {
		c.counters.unexpected(fmt.Sprintf("%s %s", in.Kind, in.Key), fmt.Errorf("ETag %s, expected %s", etag, want))
	}
	c.finish(pending, in, err)
	outcome, _ := classify(err)
	return outcome
}
