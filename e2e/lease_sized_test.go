package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// These tests are issue 24's "no store work outlives its lease": a
// conditional CopyObject of a large source is at the store when its s3cond
// vanishes (SIGKILL, SIGSTOP). The store copies on, so the key's lease must
// not be taken over before the copy could have ended: a contender's
// If-None-Match: * create on the key must not be acknowledged and then
// overwritten by the vanished holder's copy. The lease is short (500 ms ×
// 2 before a takeover), far shorter than the copy; the copy's lease is
// sized by its source at min_store_mib_per_second.
const (
	sizedCopySource = 512 << 20
	sizedLeaseEnv   = "S3COND_LEASE_MIN_STORE_MIB_PER_SECOND=32" // 16 s of lease for the source
)

// sizedLeaseEnv is set as a variable, not in the config file, so that the
// tests also run (and fail) on an s3cond without the setting, which only
// warns about a variable it does not know.
func sizedLeaseConfig(tap **StoreTap, t *testing.T) Option {
	return WithConfig(func(c *Config) {
		*tap = NewStoreTap(t, c.Backend.Endpoint)
		c.Backend.Endpoint = (*tap).URL
		c.Lease.Timeout = "500ms"
		c.Lease.MaxClockSkewRate = 2
		c.Lease.PollInterval = "50ms"
	})
}

// copyAtStore starts the holder's conditional copy of /sized/src to
// /sized/dst and returns once the store has its request, with a channel
// for the holder's answer (its status, 0 for a broken connection).
func copyAtStore(t *testing.T, e *Env, holder *testservers.S3cond, tap *StoreTap) <-chan int {
	t.Helper()
	ctx := t.Context()
	backend := e.BackendClient()
	CreateBucket(t, backend, "sized")
	if _, err := backend.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sized"), Key: aws.String("src"),
		Body: NewPatternReader(11, sizedCopySource), ContentLength: aws.Int64(sizedCopySource)}); err != nil {
		t.Fatalf("put the copy source: %v", err)
	}
	answer := make(chan int, 1)
	go func() {
		resp, err := DoContext(context.WithoutCancel(ctx), holder.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/sized/dst",
			Header: http.Header{"If-None-Match": {"*"}, "X-Amz-Copy-Source": {"/sized/src"}}})
		if err != nil {
			answer <- 0
			return
		}
		answer <- resp.Status
	}()
	tap.Copies.WaitFor(t, "the holder's copy at the store", func(c TappedCopy) bool { return c.Path == "/sized/dst" && c.Sent })
	return answer
}

// contendUntilAnswered creates /sized/dst with If-None-Match: * through
// client, retrying each 409 (the key's lease is held) as a client does, and
// returns whether the create was acknowledged.
func contendUntilAnswered(t *testing.T, client *s3.Client) bool {
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
			return true
		case status == http.StatusPreconditionFailed:
			t.Logf("the contender's create was refused (412) after %s (attempt %d)", time.Since(start), attempt)
			return false
		case status == http.StatusConflict && time.Since(start) < 2*time.Minute:
			continue
		default:
			t.Fatalf("the contender's create after %s: %v; want 412 once the copy landed, or 409 while the lease is held", time.Since(start), err)
		}
	}
}

// requireCopyIsFinal waits for the store to finish the vanished holder's
// copy and checks the key ends as the acknowledged writes say: the copy,
// unless the contender's create was acknowledged, which the copy must then
// not have overwritten.
func requireCopyIsFinal(t *testing.T, e *Env, tap *StoreTap, contenderAcknowledged bool) {
	t.Helper()
	done := tap.Copies.WaitFor(t, "the store's answer to the holder's copy", func(c TappedCopy) bool { return c.Path == "/sized/dst" && c.Answered })
	head, err := e.BackendClient().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("sized"), Key: aws.String("dst")})
	if err != nil {
		t.Fatalf("HEAD of the key after the copy (store status %d): %v", done.Status, err)
	}
	size := aws.ToInt64(head.ContentLength)
	switch {
	case contenderAcknowledged && size != int64(len("contender")):
		t.Fatalf("the contender's acknowledged If-None-Match: * create was overwritten by the vanished holder's copy (the key holds %d bytes): the lease was taken over while the store still copied", size)
	case !contenderAcknowledged && size != sizedCopySource:
		t.Fatalf("the key holds %d bytes after the copy (store status %d); want the copy's %d", size, done.Status, int64(sizedCopySource))
	}
}

// The holder is SIGKILLed while the store copies; the contender is the
// same s3cond restarted on its data_dir (the embedded lease store).
func TestKilledCopyHolderKeepsTheKeyUntilTheCopyLands(t *testing.T) {
	var tap *StoreTap
	e := NewEnv(t, sizedLeaseConfig(&tap, t), WithProcessEnv(sizedLeaseEnv))
	e.RequireProxy(t)
	holder := e.Proxies[0]
	answer := copyAtStore(t, e, holder, tap)
	holder.Process.Kill()
	if status := <-answer; status != 0 {
		t.Fatalf("the killed holder answered %d", status)
	}
	holder.Restart(t)
	acknowledged := contendUntilAnswered(t, e.Client(t, e.RW))
	requireCopyIsFinal(t, e, tap, acknowledged)
}

// The holder is SIGSTOPped while the store copies, the contender writes
// through another s3cond of the fleet (etcd), and the holder is woken
// once the contender has its answer: the two must not both be acknowledged.
func TestStoppedCopyHolderKeepsTheKeyUntilTheCopyLands(t *testing.T) {
	var tap *StoreTap
	etcd := testservers.StartEtcdCluster(t)
	e := NewEnv(t, sizedLeaseConfig(&tap, t), WithProxies(2), WithProcessEnv(sizedLeaseEnv,
		"S3COND_LEASE_STORE=etcd", "S3COND_LEASE_ETCD_ENDPOINTS="+strings.Join(etcd.Endpoints(), ",")))
	e.RequireProxy(t)
	holder := e.Proxies[0]
	answer := copyAtStore(t, e, holder, tap)
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
	acknowledged := contendUntilAnswered(t, e.ClientAt(t, e.Proxies[1].Endpoint, e.RW))
	requireCopyIsFinal(t, e, tap, acknowledged)
	wake()
	holderStatus := <-answer
	t.Logf("the woken holder answered %d", holderStatus)
	if acknowledged && holderStatus == http.StatusOK {
		t.Fatal("both If-None-Match: * writes of the key were acknowledged")
	}
}
