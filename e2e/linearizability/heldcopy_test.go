package linearizability

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"go.yaml.in/yaml/v3"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// The sized-lease scenarios: a conditional CopyObject's lease is sized to
// its source (lease.timeout plus the source's bytes at
// min_store_mib_per_second), longer than the plain timeout, because the
// store goes on copying after its s3cond is gone. The copy is held in the
// delay proxy on its way to the store, as a store still copying a large
// source holds it: released, it lands whatever happened to its sender.
const (
	sizedSourceKey  = "sizedsrc"
	sizedSourceSize = 4 << 20
	// sizedRate is min_store_mib_per_second: the copy's lease is
	// LeaseTimeout + 4 s = 5 s, under the cap.
	sizedRate = 1
	// sizedCap is lease.max_sized_timeout: a wait that covers the longest
	// lease lasts sizedCap × SkewRate = 12 s, one of the plain timeout
	// LeaseTimeout × SkewRate = 2 s.
	sizedCap = 6 * time.Second
	// plainWait is the wait of the negative controls.
	plainWait = LeaseTimeout * SkewRate
	// copyLandsAfter is when the held copy is released, counted from the
	// event that lost its row, unless a contender is acknowledged first:
	// past the plain wait, well within the sized lease.
	copyLandsAfter = 2 * plainWait
	// contenderClient is the history's client id of the second writer.
	contenderClient = 2
	// unsafePlainLeaseWait is the build tag of the negative controls: every
	// wait for rows nobody can read lasts only timeout × skew.
	unsafePlainLeaseWait = "s3cond_unsafe_plain_lease_wait"
)

// copyMarker is the header of the held copy as s3cond sends it to the store.
var copyMarker = []byte("X-Amz-Copy-Source: /" + testBucket + "/" + sizedSourceKey)

// sizedLeases sets the sized-lease settings of the scenarios.
func sizedLeases(cfg *e2e.Config) {
	cfg.Lease.MaxSizedTimeout = sizedCap.String()
	cfg.Lease.MinStoreMiBPerSecond = sizedRate
}

// heldCopy is the holder's conditional CopyObject onto a key, held at the
// delay proxy on its way to the store.
type heldCopy struct {
	conn   *testservers.ProxyConn
	op     Pending
	answer chan *e2e.RawResponse // nil for a broken connection
}

// startHeldCopy writes the copy source straight to the store, sends a
// CopyObject of it onto key with If-None-Match: * through proxy, and
// returns once the copy's request reached the delay proxy (s3cond holds
// the sized lease by then: it lengthens the lease before it sends the
// copy) and is held there.
func startHeldCopy(t *testing.T, c *Cluster, rec *Recorder, proxy int, key string) *heldCopy {
	t.Helper()
	store := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
	if _, err := store.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(sizedSourceKey),
		Body: bytesReader(Body("holder", sizedSourceSize))}); err != nil {
		t.Fatalf("put the copy source: %v", err)
	}
	found, stop := c.Delay.Watch(copyMarker)
	defer stop()
	// Bytes wait this long in the proxy, so the copy can be paused before
	// any of it reaches the store.
	c.Delay.SetLatency(300 * time.Millisecond)
	defer c.Delay.SetLatency(0)
	h := &heldCopy{op: rec.Invoke(holderClient, Input{Kind: OpCreate, Key: key, Value: "holder"}), answer: make(chan *e2e.RawResponse, 1)}
	go func() {
		resp, err := e2e.DoContext(context.Background(), c.Proxies[proxy].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
			Path: "/" + c.Bucket + "/" + key, Header: http.Header{"If-None-Match": {"*"}, "X-Amz-Copy-Source": {"/" + c.Bucket + "/" + sizedSourceKey}}})
		if err != nil {
			resp = nil
		}
		h.answer <- resp
	}()
	select {
	case seen := <-found:
		h.conn = seen.Conn
		h.conn.Pause()
	case <-time.After(20 * time.Second):
		t.Fatal("the holder's CopyObject never reached the store")
	}
	return h
}

// landed releases the copy and waits until the store holds the copy's
// value on key: the store did the work its vanished sender asked for.
func (h *heldCopy) landed(t *testing.T, c *Cluster, key string) {
	t.Helper()
	h.conn.Resume()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := testkit.Poll(ctx, func(context.Context) error {
		if value, _ := backendValue(t, c, key); value != "holder" {
			return errors.New("the copy has not landed")
		}
		return nil
	}); err != nil {
		t.Fatalf("the held copy never landed on %s: the scenario did not happen: %v", key, err)
	}
}

// contend creates key through proxy as a client does, again after each
// 503 (the lease store refuses while it waits) or 409, until it is
// acknowledged or refused with 412; every attempt goes in the history.
// acked is closed when the create is acknowledged.
func contend(t *testing.T, c *Cluster, rec *Recorder, proxy int, key string, acked chan<- struct{}) Outcome {
	t.Helper()
	client := c.Client(proxy, WaitBudget+5*time.Second)
	deadline := time.Now().Add(time.Minute)
	for {
		op := rec.Invoke(contenderClient, Input{Kind: OpCreate, Key: key, Value: "contender"})
		ctx, cancel := context.WithTimeout(t.Context(), WaitBudget+5*time.Second)
		err := create(ctx, client, c.Bucket, key, "contender")
		cancel()
		switch status := e2e.HTTPStatus(err); {
		case err == nil:
			op.Return(Output{Outcome: OutcomeOK})
			close(acked)
			return OutcomeOK
		case status == http.StatusPreconditionFailed:
			op.Return(Output{Outcome: OutcomePreconditionFailed})
			return OutcomePreconditionFailed
		case status == http.StatusServiceUnavailable:
			op.Return(Output{Outcome: OutcomeRefused})
		case status == http.StatusConflict:
			op.Return(Output{Outcome: OutcomeConflict})
		default:
			t.Fatalf("the contender's create: %v; want 503 or 409 while the lost leases may live, then 200 or 412", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the contender was never answered 200 or 412")
		}
		time.Sleep(PollInterval) // a client's pause before it retries
	}
}

// releaseWhenDue lets the held copy land copyLandsAfter after from, or as
// soon as the contender is acknowledged, and returns once it has.
func releaseWhenDue(t *testing.T, c *Cluster, h *heldCopy, key string, from time.Time, acked <-chan struct{}) {
	t.Helper()
	select {
	case <-acked:
	case <-time.After(time.Until(from.Add(copyLandsAfter))):
	}
	h.landed(t, c, key)
}

// recordFinalValue reads key from the store into the history.
func recordFinalValue(t *testing.T, c *Cluster, rec *Recorder, key string) string {
	t.Helper()
	get := rec.Invoke(3, Input{Kind: OpGet, Key: key})
	value, found := backendValue(t, c, key)
	if found {
		get.Return(Output{Outcome: OutcomeOK, Value: value})
	} else {
		get.Return(Output{Outcome: OutcomeNotFound})
	}
	return value
}

// editYAML rewrites the YAML file at path through edit.
func editYAML(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	edit(doc)
	if raw, err = yaml.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}
