// Package probe measures which S3 conditions a store honours: for each
// capability (PutObject If-None-Match: *, If-Match, CopyObject, Complete-
// MultipartUpload, DeleteObject, DeleteObjects, read and copy-source
// conditions) it runs sequential cases and, where the capability guards a
// write, races of writers released together across two connection pools.
// It writes only fresh keys under a scratch prefix, and afterwards deletes
// exactly the keys it wrote and aborts the uploads it started (never what a
// listing returns). Every answer is read through a size cap (bounds.go) and
// the whole under Options.Timeout, so a hostile store can neither make it
// delete other objects nor take it past its memory and time bounds.
// `s3cond probe` prints its Report; backend.conditional: auto decides from it.
package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Verdict is what the probe concluded about one capability.
type Verdict string

// The verdicts, from best to worst for a store that claims the capability.
const (
	// Native: right sequentially and under races.
	Native Verdict = "native"
	// Racy: right sequentially, more than one winner under a race.
	Racy Verdict = "racy"
	// Ignored: the header is accepted and the operation happens anyway.
	Ignored Verdict = "ignored"
	// Refused: 501, or 400 NotImplemented / InvalidArgument / InvalidRequest.
	Refused Verdict = "refused"
	// Partial: some cases right, others not (Detail names them).
	Partial Verdict = "partial"
	// Error: the probe could not measure (network, setup failure).
	Error Verdict = "error"
	// InPlace (atomic_uploads only): the store shows an upload before its
	// last byte, or keeps one cut off (backend.writes_in_place).
	InPlace Verdict = "in_place"
)

// Capability names, in the order reported.
const (
	PutIfNoneMatch      = "put_if_none_match"
	PutIfMatch          = "put_if_match"
	CopyIfNoneMatch     = "copy_if_none_match"
	CopyIfMatch         = "copy_if_match"
	CompleteIfNoneMatch = "complete_if_none_match"
	CompleteIfMatch     = "complete_if_match"
	DeleteIfMatch       = "delete_if_match"
	DeleteObjectsETag   = "delete_objects_etag"
	ReadConditions      = "read_conditions"
	CopySourceCondition = "copy_source_conditions"
	// AtomicUploads is not a condition: whether an upload stays unseen
	// until its last byte, which s3cond's held-back final byte relies on.
	AtomicUploads = "atomic_uploads"
)

// WriteCapabilities are the conditional writes s3cond serves: native mode
// forwards all of them, so a store is native only if every one is.
var WriteCapabilities = []string{
	PutIfNoneMatch, PutIfMatch, CopyIfNoneMatch, CopyIfMatch,
	CompleteIfNoneMatch, CompleteIfMatch, DeleteIfMatch, DeleteObjectsETag,
}

// AllCapabilities is every capability, in report order.
var AllCapabilities = append(append([]string(nil), WriteCapabilities...), ReadConditions, CopySourceCondition, AtomicUploads)

// Result is the verdict on one capability and the evidence for it.
type Result struct {
	Verdict Verdict `json:"verdict"`
	Detail  string  `json:"detail"`
	// Remedy, on a partial verdict, is how s3cond makes the capability
	// right with the store's own check (remedy.go): set only when the
	// remedied form was raced against every write it meets and won.
	Remedy string `json:"remedy,omitempty"`
	// Raced, when set, is why the capability is known not to be atomic on
	// this store: a race it lost (this probe's or a kept earlier one's) or
	// the known-racy table (knownracy.go). A later probe never clears it
	// (HoldBackRaced): a race lost once was lost by chance of timing, and
	// a probe that wins its rounds did not prove the store atomic.
	Raced string `json:"raced,omitempty"`
}

// Report is the whole measurement. Recommendation is "native" only when
// every write capability is native.
type Report struct {
	Capabilities   map[string]Result `json:"capabilities"`
	Recommendation string            `json:"recommendation"`
}

// Recommendations.
const (
	RecommendNative = "native"
	RecommendLease  = "lease"
)

// Options say where and how hard to probe.
type Options struct {
	Endpoint    string
	Region      string
	AccessKeyID string
	SecretKey   string
	PathStyle   bool
	// Credentials, when set, are used instead of AccessKeyID and SecretKey.
	Credentials aws.CredentialsProvider
	Bucket      string
	// Prefix is the scratch prefix; a random one under "s3cond-probe-" when empty.
	Prefix string
	// Writers race per round (at least 2). A race starts rounds for
	// RaceTime, at least one and at most Rounds, and stops at the first
	// round with two winners: a store whose losers wait (SeaweedFS answers
	// a losing writer after about a second) gets as many rounds as fit,
	// not a count that runs past the probe's Timeout.
	Writers  int
	Rounds   int
	RaceTime time.Duration
	// Timeout bounds the whole probe, cleanup excluded; cleanup (Run's and
	// the start-up checks': Framing, CheckObjectLock,
	// CheckMultipartConditions) has half as long, at most 20 s.
	Timeout time.Duration
	// NewHTTPClient makes one connection pool; it is called twice so racing
	// writers use two. Nil: a fresh http.Transport each time.
	NewHTTPClient func() *http.Client
	// DeferCleanup, when set, is handed the cleanup (bounded as ever)
	// instead of Run running it before it returns: the start-up probe's
	// verdict is complete before its scratch keys are deleted, and
	// SeaweedFS 4.53 took 4-5 s to delete the 125 a probe writes, on the
	// path to the listener. The caller must run it.
	DeferCleanup func(cleanup func())
	// firstRoundWriters race a race's first round (2 when zero; a test
	// of the most requests the probe has in flight sets Writers).
	firstRoundWriters int
}

// Defaults for Options left zero.
const (
	DefaultWriters = 8
	// DefaultRounds caps a race's rounds: enough to miss a race lost 1
	// round in 40 with probability 0.004% (race.go), and what a store local
	// to s3cond races in DefaultRaceTime.
	DefaultRounds   = 400
	DefaultRaceTime = 2 * time.Second
	DefaultTimeout  = 60 * time.Second
	cleanupTimeout  = 20 * time.Second
)

func (o Options) withDefaults() Options {
	if o.Writers < 2 {
		o.Writers = DefaultWriters
	}
	if o.Rounds < 1 {
		o.Rounds = DefaultRounds
	}
	if o.RaceTime <= 0 {
		o.RaceTime = DefaultRaceTime
	}
	if o.firstRoundWriters < 2 || o.firstRoundWriters > o.Writers {
		o.firstRoundWriters = min(2, o.Writers)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Prefix == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		o.Prefix = "s3cond-probe-" + hex.EncodeToString(b) + "/"
	}
	if o.NewHTTPClient == nil {
		o.NewHTTPClient = func() *http.Client {
			return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		}
	}
	return o
}

// cleanupBound is how long a start-up check's cleanup may take after the
// check: half its Timeout, at most cleanupTimeout, so that a check of a
// store that hangs ends within 1.5 × Timeout, cleanup included.
func (o Options) cleanupBound() time.Duration {
	return min(o.Timeout/2, cleanupTimeout)
}

// Run probes the store. It returns an error only when it could not start
// (bad options); a capability it could not measure has the Error verdict.
func Run(ctx context.Context, opts Options) (Report, error) {
	opts = opts.withDefaults()
	if opts.Bucket == "" {
		return Report{}, fmt.Errorf("probe: a bucket is required")
	}
	if opts.Endpoint == "" {
		return Report{}, fmt.Errorf("probe: an endpoint is required")
	}
	s := newStore(opts)
	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cleanup := func() {
		// Cleanup has half as long as the probe had, at most cleanupTimeout:
		// a start-up probe and its cleanup fit the start-up bound (Timeout
		// is two thirds of it), and a short probe of a hung store does not
		// wait out the full 20 s.
		cleanCtx, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), opts.cleanupBound())
		defer cancelClean()
		s.cleanup(cleanCtx)
		s.close()
	}
	if opts.DeferCleanup != nil {
		defer opts.DeferCleanup(cleanup)
	} else {
		defer cleanup()
	}
	rep := Report{}
	caps, right := runChecks(runCtx, s)
	var uploads Result
	var wg sync.WaitGroup
	wg.Go(func() { uploads = probeAtomicUploads(runCtx, s) })
	raceAll(runCtx, s, caps, right)
	wg.Wait()
	caps[AtomicUploads] = uploads
	rep.Capabilities = caps
	rep.Recommendation = Recommend(rep.Capabilities)
	return rep, nil
}

// Recommend is native when every write capability is native, lease otherwise.
func Recommend(caps map[string]Result) string {
	for _, name := range WriteCapabilities {
		if caps[name].Verdict != Native {
			return RecommendLease
		}
	}
	return RecommendNative
}

// FirstWanting names the first write capability that is not native, or "".
func FirstWanting(caps map[string]Result) string {
	for _, name := range WriteCapabilities {
		if caps[name].Verdict != Native {
			return name
		}
	}
	return ""
}
