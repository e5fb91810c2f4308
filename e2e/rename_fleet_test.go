package e2e

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestEtcdRenameFleet: three s3cond processes on one etcd lease store, in
// front of s3rver (no rename, no conditions of its own). Renames of one
// source sent through all three leave one winner and one copy; a client
// token recorded by one process answers its replay through another (200,
// nothing moved) and refuses other parameters (400): the records are the
// fleet's, not a process's.
func TestEtcdRenameFleet(t *testing.T) {
	e, clients := newEtcdFleet(t, BackendS3rver)
	ctx := t.Context()
	for round := range 3 {
		putBytes(t, ctx, clients[0], "race", "fleet/src", []byte("contended"))
		var wins atomic.Int32
		var wg sync.WaitGroup
		dsts := make([]string, 6)
		for i := range dsts {
			dsts[i] = "fleet/dst-" + string(rune('a'+round)) + string(rune('a'+i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := clients[i%len(clients)].RenameObject(ctx, renameInput("race", "fleet/src", dsts[i]))
				switch code := ErrorCode(err); {
				case err == nil:
					wins.Add(1)
				case code != "NoSuchKey" && code != "ConditionalRequestConflict":
					t.Errorf("racer %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		copies := 0
		for _, d := range dsts {
			if _, err := e.BackendClient().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("race"), Key: aws.String(d)}); err == nil {
				copies++
			}
		}
		if wins.Load() != 1 || copies != 1 {
			t.Fatalf("round %d: %d renames won, %d copies; want 1 and 1", round, wins.Load(), copies)
		}
		requireMissing(t, ctx, e.BackendClient(), "race", "fleet/src")
	}

	putBytes(t, ctx, clients[0], "race", "fleet/token-src", []byte("first"))
	in := renameInput("race", "fleet/token-src", "fleet/token-dst")
	in.ClientToken = aws.String("fleet-token")
	if _, err := clients[0].RenameObject(ctx, in); err != nil {
		t.Fatal(err)
	}
	putBytes(t, ctx, clients[0], "race", "fleet/token-src", []byte("second"))
	if _, err := clients[1].RenameObject(ctx, in); err != nil {
		t.Fatalf("replay through another process: %v", err)
	}
	if got := string(getBytes(t, ctx, e.BackendClient(), "race", "fleet/token-src")); got != "second" {
		t.Fatalf("the replay through another process renamed again: source %q", got)
	}
	other := renameInput("race", "fleet/token-src", "fleet/elsewhere")
	other.ClientToken = in.ClientToken
	_, err := clients[2].RenameObject(ctx, other)
	if HTTPStatus(err) != http.StatusBadRequest || ErrorCode(err) != "IdempotencyParameterMismatch" {
		t.Fatalf("the token with other parameters through a third process: %v", err)
	}
}
