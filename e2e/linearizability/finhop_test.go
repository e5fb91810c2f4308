package linearizability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testkit"
)

// framingEnv turns on the aws-chunked framing of conditional bodies
// (backend.conditional_body_framing), which versitygw v1.8.0 reads.
const framingEnv = "S3COND_BACKEND_CONDITIONAL_BODY_FRAMING=aws-chunked"

// finHopBody is larger than s3cond reads whole before it takes a lease
// (backendhttp.MaxBufferedPUT), so it streams to the store while the lease
// is sought, and an abort cuts a request the store has mostly read.
const finHopBody = 1 << 20

// newFINHopCluster is versitygw behind a delay proxy (to see what s3cond
// sent) behind a FIN-closing hop (an L4 proxy that passes s3cond's reset
// on as a FIN), and one s3cond with framing set as env says.
func newFINHopCluster(t *testing.T, env ...string) *Cluster {
	return NewCluster(t, ClusterOptions{DelayBackend: true, FINHop: true, Env: env})
}

// TestFINHopAbandonedConditionalPutIsNotStored: a client starts an
// If-None-Match: * PUT, s3cond streams all but the end to versitygw, and
// the client hangs up. s3cond aborts its backend request with a reset, which
// the hop turns into a FIN. Holding back the final byte alone, versitygw
// stored the truncated body (issue 24, item 3: 20/20); framed, the stream
// has no final chunk and versitygw refuses it.
func TestFINHopAbandonedConditionalPutIsNotStored(t *testing.T) {
	c := newFINHopCluster(t, framingEnv)
	body := bigBody("abandoned", finHopBody)
	up := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, "abandoned",
		http.Header{"If-None-Match": {"*"}}, body, len(body)-1, c.Delay)
	if _, err := backendConnCarrying(c.Delay, up.connsAtStart, int64(len(body))/2, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	up.Abandon()
	if resp, err := up.Wait(30 * time.Second); err == nil && resp.Status == http.StatusOK {
		t.Fatalf("an abandoned upload was answered 200")
	}
	waitSettledResets(t, c, 1)
	requireNoObject(t, c, "abandoned")
}

// TestFINHopBodyFailingItsSHA256IsNotStored: a conditional PUT whose signed
// x-amz-content-sha256 does not match its body is answered 400, and its
// body, refused at its very end, must not be stored either (issue 24,
// item 3: stored 11/20 through a FIN hop).
func TestFINHopBodyFailingItsSHA256IsNotStored(t *testing.T) {
	c := newFINHopCluster(t, framingEnv)
	body := bigBody("tampered", finHopBody)
	other := sha256.Sum256([]byte("not this body"))
	resp := e2e.Do(t, c.Proxies[0].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
		Path: "/" + c.Bucket + "/tampered", Header: http.Header{"If-None-Match": {"*"}},
		Body: body, PayloadHash: hex.EncodeToString(other[:])})
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("PUT with a wrong signed SHA-256: %d, want 400\n%s", resp.Status, resp.Body)
	}
	waitSettledResets(t, c, 1)
	requireNoObject(t, c, "tampered")
}

// TestFINHopRaceLoserDoesNotReplaceWinner: a large If-None-Match: * PUT
// streams to versitygw; a small one of the same key wins the race (200);
// the large one then finishes its upload, fails its re-check (412) and is
// aborted. Through a FIN hop its truncated body replaced the acknowledged
// winner (issue 24, item 3: 19/20); framed, the winner stays.
func TestFINHopRaceLoserDoesNotReplaceWinner(t *testing.T) {
	got, winner := raceThroughFINHop(t, framingEnv)
	if !bytes.Equal(got, winner) {
		t.Fatalf("the store holds %d bytes under the acknowledged winner's key, not its %d", len(got), len(winner))
	}
}

// TestFINHopWithoutFramingLoserReplacesWinner is the negative control: the
// same race with framing off (today's default, the hold-back and reset
// alone) ends with the loser's truncated body over the acknowledged winner,
// so the tests above catch the unsafe variant, and versitygw still stores
// a body a FIN ended (if it stops doing so, this says the fault is gone).
func TestFINHopWithoutFramingLoserReplacesWinner(t *testing.T) {
	got, winner := raceThroughFINHop(t, "S3COND_BACKEND_CONDITIONAL_BODY_FRAMING=none")
	if bytes.Equal(got, winner) {
		t.Fatalf("without framing the acknowledged winner survived a FIN hop: the control no longer shows the fault")
	}
	t.Logf("without framing the store holds %d bytes (the loser's truncated body) over the %d-byte winner", len(got), len(winner))
}

// raceThroughFINHop runs the race of TestFINHopRaceLoserDoesNotReplaceWinner
// and returns what the store holds and the winner's body.
func raceThroughFINHop(t *testing.T, env string) (stored, winner []byte) {
	t.Helper()
	c := newFINHopCluster(t, env)
	loserBody := bigBody("loser", finHopBody)
	loser := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, "raced",
		http.Header{"If-None-Match": {"*"}}, loserBody, len(loserBody)-1, c.Delay)
	if _, err := backendConnCarrying(c.Delay, loser.connsAtStart, int64(len(loserBody))/2, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	winnerBody := []byte("the acknowledged winner")
	won := e2e.Do(t, c.Proxies[0].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
		Path: "/" + c.Bucket + "/raced", Header: http.Header{"If-None-Match": {"*"}}, Body: winnerBody})
	if won.Status != http.StatusOK {
		t.Fatalf("the small create: %d, want 200\n%s", won.Status, won.Body)
	}
	loser.SendRest()
	resp, err := loser.Wait(30 * time.Second)
	if err != nil {
		t.Fatalf("the large create: %v", err)
	}
	if resp.Status != http.StatusPreconditionFailed {
		t.Fatalf("the large create after the small one won: %d, want 412\n%s", resp.Status, resp.Body)
	}
	waitSettledResets(t, c, 1)
	return storeObject(t, c, "raced"), winnerBody
}

// waitSettledResets waits until the hop passed n of s3cond's resets on as
// FINs and versitygw has closed those connections: the fault happened and
// the store is done with the aborted requests.
func waitSettledResets(t *testing.T, c *Cluster, n int64) {
	t.Helper()
	// The store closes its connections on its own time: ask the hop.
	testkit.Within(t, 30*time.Second, fmt.Sprint(n, " settled resets"), func(context.Context) error {
		if settled := c.FIN.SettledResets(); settled < n {
			return fmt.Errorf("the hop passed on %d resets as FINs and the store settled %d", c.FIN.ResetsAsFIN(), settled)
		}
		return nil
	})
}

func requireNoObject(t *testing.T, c *Cluster, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	direct := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
	out, err := direct.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(key)})
	var missing *s3types.NotFound
	switch {
	case errors.As(err, &missing):
	case err != nil:
		t.Fatalf("HEAD %s on the store: %v", key, err)
	default:
		t.Fatalf("the store holds %s (%d bytes), which s3cond never acknowledged", key, aws.ToInt64(out.ContentLength))
	}
}

func storeObject(t *testing.T, c *Cluster, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	direct := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
	out, err := direct.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GET %s on the store: %v", key, err)
	}
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read %s from the store: %v", key, err)
	}
	return got
}

// TestFINHopFramedCreateStoresTheBody: the framing itself loses nothing: a
// large and a small conditional create reach versitygw byte for byte.
func TestFINHopFramedCreateStoresTheBody(t *testing.T) {
	c := newFINHopCluster(t, framingEnv)
	for key, body := range map[string][]byte{"large": bigBody("large", finHopBody+12345), "small": []byte("small")} {
		resp := e2e.Do(t, c.Proxies[0].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
			Path: "/" + c.Bucket + "/" + key, Header: http.Header{"If-None-Match": {"*"}}, Body: body})
		if resp.Status != http.StatusOK {
			t.Fatalf("create %s: %d\n%s", key, resp.Status, resp.Body)
		}
		if got := storeObject(t, c, key); !bytes.Equal(got, body) {
			t.Fatalf("the store holds %d bytes under %s, not the %d written", len(got), key, len(body))
		}
	}
}

// TestLinearizableThroughFINHop records creates, compare-and-swaps, deletes
// and reads of bodies large enough to stream (256 KiB), through a hop that
// passes s3cond's resets on as FINs, with about one write in six abandoned
// half-way. Every loser of a race and every abandoned upload is aborted by
// s3cond; holding back the final byte alone, versitygw then stored their
// truncated bodies (a 412 loser's value appears, and GETs return short
// bodies). Framed, the history stays linearizable.
func TestLinearizableThroughFINHop(t *testing.T) {
	c := newFINHopCluster(t, framingEnv)
	w := Workload{Cluster: c, Keys: []string{"k1", "k2"}, Clients: 6, BodySize: 256 << 10,
		AbandonOneIn: 6, WholeBodies: true, OpTimeout: 15 * time.Second}
	rec := record(t, w, recordingTime(t, 10*time.Second), nil)
	t.Logf("the hop passed on %d resets as FINs: %s", c.FIN.ResetsAsFIN(), rec.Stats())
	if c.FIN.ResetsAsFIN() < 5 {
		t.Fatalf("only %d aborted backend requests went through the hop: the fault was not injected", c.FIN.ResetsAsFIN())
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}
