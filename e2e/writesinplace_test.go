package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/s3cond/s3cond/internal/testservers"
)

// inPlaceLease is lease.timeout in these tests: a streamed upload whose
// final byte comes later than this after its HEAD is re-checked under its
// lease (spec §3 step 4), as every upload slower than lease.timeout is.
const inPlaceLease = time.Second

// slowBody is a body larger than the 64 KiB s3cond reads whole before it
// sends a leased body, so it streams with its final byte held back; its
// last KiB comes after a pause longer than the lease timeout, as from a
// client slower than lease.timeout.
type slowBody struct {
	r     io.Reader
	rest  []byte
	pause time.Duration
}

func newSlowBody(body []byte, pause time.Duration) *slowBody {
	cut := len(body) - 1<<10
	return &slowBody{r: bytes.NewReader(body[:cut]), rest: body[cut:], pause: pause}
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.rest != nil {
		time.Sleep(b.pause) // the slow client itself, not a wait for an event
		b.r, b.rest = bytes.NewReader(b.rest), nil
		if n > 0 {
			return n, nil
		}
		return b.r.Read(p)
	}
	return n, err
}

// slowConditionalPut sends body to path (/bucket/key) with header
// (If-None-Match or If-Match), its last KiB after a pause past the lease
// timeout, and returns the status.
func slowConditionalPut(t *testing.T, endpoint string, cred Credentials, path string, header http.Header, body []byte) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := DoContext(ctx, endpoint, cred, RawRequest{Method: http.MethodPut, Path: path,
		Header: header, BodyFrom: newSlowBody(body, inPlaceLease+inPlaceLease/2), ContentLength: int64(len(body)),
		PayloadHash: UnsignedPayload})
	if err != nil {
		t.Fatalf("PUT %s: %v", path, err)
	}
	return resp.Status
}

// slowPutBody is 256 KiB: more than the 64 KiB s3cond reads whole.
func slowPutBody() []byte { return []byte(strings.Repeat("streamed body|", 256<<10/14+1)) }

// inPlaceOutcome is what slow streamed conditional PUTs did on s3rver.
type inPlaceOutcome struct {
	createStatus int    // If-None-Match: * on an absent key
	casStatus    int    // If-Match with the current ETag
	afterCAS     []byte // the object after that CAS
}

// slowConditionalPutsOnS3rver runs, through s3cond in front of s3rver
// (which stores an upload as it arrives: docs/stores.md), with env's extra
// settings, a create of an absent key and a CAS that holds, both with slow
// streamed bodies: both must succeed.
func slowConditionalPutsOnS3rver(t *testing.T, env ...string) (inPlaceOutcome, []byte) {
	t.Helper()
	env = append(env, "S3COND_LEASE_TIMEOUT="+inPlaceLease.String())
	e := NewEnv(t, WithBackend(BackendS3rver), WithProcessEnv(env...))
	e.RequireProxy(t)
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "inplace")
	body := slowPutBody()
	var out inPlaceOutcome
	out.createStatus = slowConditionalPut(t, e.Endpoint, e.RW, "/inplace/fresh", http.Header{"If-None-Match": {"*"}}, body)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v1 := putBytes(t, ctx, c, "inplace", "held", []byte("version 1"))
	out.casStatus = slowConditionalPut(t, e.Endpoint, e.RW, "/inplace/held", http.Header{"If-Match": {aws.ToString(v1.ETag)}}, body)
	out.afterCAS = getBytes(t, ctx, c, "inplace", "held")
	return out, body
}

// TestWritesInPlaceStoreKeepsSlowConditionalPutsRight: with
// backend.writes_in_place, a slow streamed create of an absent key on
// s3rver succeeds, and so does a CAS on the current ETag, which leaves the
// whole new body.
func TestWritesInPlaceStoreKeepsSlowConditionalPutsRight(t *testing.T) {
	got, body := slowConditionalPutsOnS3rver(t, "S3COND_BACKEND_WRITES_IN_PLACE=true")
	if got.createStatus != http.StatusOK {
		t.Errorf("slow If-None-Match: * create of an absent key: %d, want 200", got.createStatus)
	}
	if got.casStatus != http.StatusOK {
		t.Errorf("slow CAS on the current ETag: %d, want 200", got.casStatus)
	}
	if !bytes.Equal(got.afterCAS, body) {
		t.Errorf("after the CAS the object holds %d bytes, want the %d of its body", len(got.afterCAS), len(body))
	}
}

// TestWritesInPlaceStoreControl: the same without the setting goes wrong,
// so the test above measures it: the re-check under the lease sees the
// upload's own bytes on s3rver, so the create of an absent key answers 412
// and the CAS on the current ETag answers 412 after replacing the object
// with part of its body.
func TestWritesInPlaceStoreControl(t *testing.T) {
	got, body := slowConditionalPutsOnS3rver(t)
	t.Logf("without writes_in_place: create %d, CAS %d, object after it %d of %d bytes",
		got.createStatus, got.casStatus, len(got.afterCAS), len(body))
	if got.createStatus == http.StatusOK && got.casStatus == http.StatusOK {
		t.Fatal("without writes_in_place both slow conditional PUTs succeeded: the control measured nothing")
	}
}

// slowCreateOnInPlaceFake starts a fake store standing for s3rver (it
// shows an upload before its last byte) behind s3cond with
// backend.conditional, and sends a slow streamed create of an absent key.
func slowCreateOnInPlaceFake(t *testing.T, conditional string) (*testservers.S3cond, int) {
	t.Helper()
	endpoint := testservers.StartFaultyStore(t, testservers.InPlaceStore)
	s := testservers.StartS3cond(t, autoConfig(endpoint, faultyCred, conditional, testservers.FaultyStoreBucket),
		"S3COND_LEASE_TIMEOUT="+inPlaceLease.String())
	return s, slowConditionalPut(t, s.Endpoint, Credentials{"client", "client-secret"}, "/"+testservers.FaultyStoreBucket+"/fresh",
		http.Header{"If-None-Match": {"*"}}, slowPutBody())
}

// TestAutoFindsAStoreThatWritesInPlace: with backend.conditional: auto the
// start-up probe finds the store showing an upload before its last byte,
// says so, and s3cond then guards a slow streamed create there as
// writes_in_place does: 200.
func TestAutoFindsAStoreThatWritesInPlace(t *testing.T) {
	s, status := slowCreateOnInPlaceFake(t, "auto")
	requireLogged(t, s, "capability=atomic_uploads", "verdict=in_place", "leased writes take their lease before their first byte")
	if status != http.StatusOK {
		t.Fatalf("slow streamed create of an absent key on a store found in place: %d, want 200", status)
	}
}

// TestAutoFindsAStoreThatWritesInPlaceControl: the same store with lease
// (no probe) answers the create 412, its re-check at the final byte seeing
// the upload itself: the test above measures the probe's finding.
func TestAutoFindsAStoreThatWritesInPlaceControl(t *testing.T) {
	_, status := slowCreateOnInPlaceFake(t, "lease")
	if status != http.StatusPreconditionFailed {
		t.Fatalf("slow streamed create on the in-place fake without the probe: %d; the control expects 412", status)
	}
}
