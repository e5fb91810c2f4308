package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// These tests are issue 24's "no store work outlives its lease": a
// conditional CopyObject of a large source, or CompleteMultipartUpload of
// large parts, is at the store when its s3cond vanishes (SIGKILL,
// SIGSTOP). The store works on, so the key's lease must not be taken over
// before the work could have ended: a contender's If-None-Match: * create
// on the key must not be acknowledged and then overwritten by the vanished
// holder's write. The lease is short (500 ms × 2 before a takeover of a
// copy, 250 ms × 2 of a completion), shorter than the work; the work's lease is sized by its bytes at
// min_store_mib_per_second.
const (
	sizedCopySource = 640 << 20
	// versitygw assembles parts faster than it copies (0.15 to 0.7 s for
	// 512 MiB), so the completion has more bytes and a shorter lease.
	sizedParts    = 24
	sizedPartSize = 64 << 20
	sizedLeaseEnv = "S3COND_LEASE_MIN_STORE_MIB_PER_SECOND=32" // 20 s of lease for the source
)

// sizedLeaseEnv is set as a variable, not in the config file, so that the
// tests also run (and fail) on an s3cond without the setting, which only
// warns about a variable it does not know.
func sizedLeaseConfig(tap **StoreTap, t *testing.T, work storeWork) Option {
	return WithConfig(func(c *Config) {
		*tap = NewStoreTap(t, c.Backend.Endpoint)
		c.Backend.Endpoint = (*tap).URL
		c.Lease.Timeout = work.leaseTimeout.String()
		c.Lease.MaxClockSkewRate = 2
		c.Lease.PollInterval = "20ms"
	})
}

// storeWork is the vanished holder's leased write: a conditional CopyObject
// of a large source, or a conditional CompleteMultipartUpload of large
// parts, onto /sized/dst; size is what the key holds once it landed.
type storeWork struct {
	name string
	size int64
	// leaseTimeout is lease.timeout; × 2 is the takeover wait the work
	// must outlast from the contender's first attempt, or the test shows
	// nothing.
	leaseTimeout time.Duration
	// prepare writes the source or the parts straight to the store and
	// returns the holder's request.
	prepare func(t *testing.T, e *Env) RawRequest
}

var sizedCopy = storeWork{name: "copy", size: sizedCopySource, leaseTimeout: 250 * time.Millisecond, prepare: func(t *testing.T, e *Env) RawRequest {
	if _, err := e.BackendClient().PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("sized"), Key: aws.String("src"),
		Body: NewPatternReader(11, sizedCopySource), ContentLength: aws.Int64(sizedCopySource)}); err != nil {
		t.Fatalf("put the copy source: %v", err)
	}
	return RawRequest{Method: http.MethodPut, Path: "/sized/dst",
		Header: http.Header{"If-None-Match": {"*"}, "X-Amz-Copy-Source": {"/sized/src"}}}
}}

var sizedComplete = storeWork{name: "completion", size: sizedParts * sizedPartSize, leaseTimeout: 250 * time.Millisecond, prepare: func(t *testing.T, e *Env) RawRequest {
	ctx := t.Context()
	backend := e.BackendClient()
	up, err := backend.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sized"), Key: aws.String("dst")})
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	doc.WriteString("<CompleteMultipartUpload>")
	for n := int32(1); n <= sizedParts; n++ {
		out, err := backend.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sized"), Key: aws.String("dst"), UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: NewPatternReader(uint64(n), sizedPartSize), ContentLength: aws.Int64(sizedPartSize)})
		if err != nil {
			t.Fatalf("upload part %d: %v", n, err)
		}
		fmt.Fprintf(&doc, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", n, aws.ToString(out.ETag))
	}
	doc.WriteString("</CompleteMultipartUpload>")
	return RawRequest{Method: http.MethodPost, Path: "/sized/dst", Query: url.Values{"uploadId": {aws.ToString(up.UploadId)}},
		Header: http.Header{"If-None-Match": {"*"}}, Body: []byte(doc.String())}
}}

// workAtStore starts the holder's leased write and returns once the store
// has its request, with a channel for the holder's answer (its status, 0
// for a broken connection).
func workAtStore(t *testing.T, e *Env, holder *testservers.S3cond, tap *StoreTap, work storeWork) <-chan int {
	t.Helper()
	CreateBucket(t, e.BackendClient(), "sized")
	req := work.prepare(t, e)
	answer := make(chan int, 1)
	go func() {
		resp, err := DoContext(context.WithoutCancel(t.Context()), holder.Endpoint, e.RW, req)
		if err != nil {
			answer <- 0
			return
		}
		answer <- resp.Status
	}()
	tap.Work.WaitFor(t, "the holder's "+work.name+" at the store", func(c TappedWork) bool { return c.Path == "/sized/dst" && c.Sent })
	return answer
}

// contendUntilAnswered creates /sized/dst with If-None-Match: * through
// client, retrying each 409 (the key's lease is held) as a client does, and
// returns whether the create was acknowledged and when it was first tried.
func contendUntilAnswered(t *testing.T, client *s3.Client) (bool, time.Time) {
	t.Helper()
	start := time.Now()
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sized"), Key: aws.String("dst"),
			Body: bytes.NewReader([]byte("contender")), IfNoneMatch: aws.String("*")})
		cancel()
		switch status := HTTPStatus(err); {
		case err == nil:
			t.Logf("the contender's create was acknowledged after %s (attempt %d)", time.Since(start), attempt)
			return true, start
		case status == http.StatusPreconditionFailed:
			t.Logf("the contender's create was refused (412) after %s (attempt %d)", time.Since(start), attempt)
			return false, start
		case status == http.StatusConflict && time.Since(start) < 2*time.Minute:
			continue
		default:
			t.Fatalf("the contender's create after %s: %v; want 412 once the copy landed, or 409 while the lease is held", time.Since(start), err)
		}
	}
}

// requireWorkIsFinal waits for the store to finish the vanished holder's
// work and checks the key ends as the acknowledged writes say: the work,
// unless the contender's create was acknowledged, which the work must then
// not have overwritten. The work must have outlasted the unsized lease's
// takeover wait from the contender's first attempt.
func requireWorkIsFinal(t *testing.T, e *Env, tap *StoreTap, work storeWork, contenderAcknowledged bool, contenderStart time.Time) {
	t.Helper()
	done := tap.Work.WaitFor(t, "the store's answer to the holder's "+work.name, func(c TappedWork) bool { return c.Path == "/sized/dst" && c.Answered })
	if takeover := 2 * work.leaseTimeout; done.At.Sub(contenderStart) < takeover+100*time.Millisecond {
		t.Fatalf("the %s landed %s after the contender's first attempt, within timeout × skew (%s): too fast a store to show anything; make it larger",
			work.name, done.At.Sub(contenderStart), takeover)
	}
	head, err := e.BackendClient().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("sized"), Key: aws.String("dst")})
	if err != nil {
		t.Fatalf("HEAD of the key after the copy (store status %d): %v", done.Status, err)
	}
	size := aws.ToInt64(head.ContentLength)
	switch {
	case contenderAcknowledged && size != int64(len("contender")):
		t.Fatalf("the contender's acknowledged If-None-Match: * create was overwritten by the vanished holder's %s (the key holds %d bytes): the lease was taken over while the store still wrote", work.name, size)
	case !contenderAcknowledged && size != work.size:
		t.Fatalf("the key holds %d bytes after the %s (store status %d); want its %d", size, work.name, done.Status, work.size)
	}
}

// The holder is SIGKILLed while the store works; the contender is the
// same s3cond restarted on its data_dir (the embedded lease store).
func TestKilledCopyHolderKeepsTheKeyUntilTheCopyLands(t *testing.T) {
	testKilledHolderKeepsTheKey(t, sizedCopy)
}

func TestKilledCompleteHolderKeepsTheKeyUntilTheUploadLands(t *testing.T) {
	testKilledHolderKeepsTheKey(t, sizedComplete)
}

func testKilledHolderKeepsTheKey(t *testing.T, work storeWork) {
	var tap *StoreTap
	e := NewEnv(t, sizedLeaseConfig(&tap, t, work), WithProcessEnv(sizedLeaseEnv))
	e.RequireProxy(t)
	holder := e.Proxies[0]
	answer := workAtStore(t, e, holder, tap, work)
	holder.Process.Kill()
	if status := <-answer; status != 0 {
		t.Fatalf("the killed holder answered %d", status)
	}
	holder.Restart(t)
	acknowledged, start := contendUntilAnswered(t, e.Client(t, e.RW))
	requireWorkIsFinal(t, e, tap, work, acknowledged, start)
}

// The holder is SIGSTOPped while the store works, the contender writes
// through another s3cond of the fleet (etcd), and the holder is woken
// once the contender has its answer: the two must not both be acknowledged.
func TestStoppedCopyHolderKeepsTheKeyUntilTheCopyLands(t *testing.T) {
	testStoppedHolderKeepsTheKey(t, sizedCopy)
}

func TestStoppedCompleteHolderKeepsTheKeyUntilTheUploadLands(t *testing.T) {
	testStoppedHolderKeepsTheKey(t, sizedComplete)
}

func testStoppedHolderKeepsTheKey(t *testing.T, work storeWork) {
	var tap *StoreTap
	etcd := testservers.StartEtcdCluster(t)
	e := NewEnv(t, sizedLeaseConfig(&tap, t, work), WithProxies(2), WithProcessEnv(sizedLeaseEnv,
		"S3COND_LEASE_STORE=etcd", "S3COND_LEASE_ETCD_ENDPOINTS="+strings.Join(etcd.Endpoints(), ",")))
	e.RequireProxy(t)
	holder := e.Proxies[0]
	answer := workAtStore(t, e, holder, tap, work)
	if err := syscall.Kill(holder.Process.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	woken := false
	wake := func() {
		if !woken {
			woken = true
			_ = syscall.Kill(holder.Process.Pid(), syscall.SIGCONT)
		}
	}
	defer wake()
	acknowledged, start := contendUntilAnswered(t, e.ClientAt(t, e.Proxies[1].Endpoint, e.RW))
	requireWorkIsFinal(t, e, tap, work, acknowledged, start)
	wake()
	holderStatus := <-answer
	t.Logf("the woken holder answered %d", holderStatus)
	if acknowledged && holderStatus == http.StatusOK {
		t.Fatal("both If-None-Match: * writes of the key were acknowledged")
	}
}
