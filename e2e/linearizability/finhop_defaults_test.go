package linearizability

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/s3cond/s3cond/e2e"
)

// Issue 33 finding 7: aborts are safe by default. With every framing
// setting at its default (conditional_body_framing: auto, which finds that
// versitygw reads aws-chunked uploads and refuses unfinished ones), a PUT
// that is abandoned or whose body fails its signed SHA-256 stores nothing
// through a hop that passes s3cond's resets on as FINs, conditional or
// not. Under the old defaults (framing none; and only leased PUTs framed
// even with aws-chunked) the store kept the truncated bodies.

// finHopDefaultWrites are the two kinds of PUT: leased and plain.
var finHopDefaultWrites = []struct {
	name   string
	header http.Header
}{
	{"conditional", http.Header{"If-None-Match": {"*"}}},
	{"unconditional", http.Header{}},
}

func TestFINHopDefaultsAbandonedPutIsNotStored(t *testing.T) {
	c := newFINHopCluster(t)
	for _, w := range finHopDefaultWrites {
		t.Run(w.name, func(t *testing.T) {
			key := "abandoned-" + w.name
			settled := c.FIN.SettledResets() // the start-up framing check may have closed short too
			body := bigBody(key, finHopBody)
			up := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, key, w.header, body, len(body)-1, c.Delay)
			if _, err := backendConnCarrying(c.Delay, up.connsAtStart, int64(len(body))/2, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			up.Abandon()
			if resp, err := up.Wait(30 * time.Second); err == nil && resp.Status == http.StatusOK {
				t.Fatal("an abandoned upload was answered 200")
			}
			waitSettledResets(t, c, settled+1)
			requireNoObject(t, c, key)
		})
	}
}

func TestFINHopDefaultsBodyFailingItsSHA256IsNotStored(t *testing.T) {
	c := newFINHopCluster(t)
	other := sha256.Sum256([]byte("not this body"))
	for _, w := range finHopDefaultWrites {
		t.Run(w.name, func(t *testing.T) {
			key := "tampered-" + w.name
			settled := c.FIN.SettledResets()
			resp := e2e.Do(t, c.Proxies[0].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
				Path: "/" + c.Bucket + "/" + key, Header: w.header,
				Body: bigBody(key, finHopBody), PayloadHash: hex.EncodeToString(other[:])})
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("PUT with a wrong signed SHA-256: %d, want 400\n%s", resp.Status, resp.Body)
			}
			waitSettledResets(t, c, settled+1)
			requireNoObject(t, c, key)
		})
	}
}
