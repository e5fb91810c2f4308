package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// containerHostname is the hostname both "containers" share (host
// networking, or a fixed `hostname:` in a compose file).
const containerHostname = "s3cond-replica"

// startProxyAsPID1 starts one more s3cond on e.Config as a container runs
// it: PID 1 of its own PID namespace, hostname containerHostname.
func (e *Env) startProxyAsPID1(t *testing.T) *testservers.S3cond {
	t.Helper()
	cfg := e.Config
	cfg.Keys = slices.Clone(cfg.Keys)
	cfg.Server.Listen = testservers.FreeAddr(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return testservers.StartS3condAsPID1(t, containerHostname, text, e.processEnv...)
}

// pid1Env is versitygw behind s3cond with a moto lease table; the leases
// wait 2 s at most, so a conflict answers 409 quickly.
func pid1Env(t *testing.T) *Env {
	t.Helper()
	if TargetMode() == ModeDirect {
		t.Skip("lease owners are s3cond's; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	e := NewEnv(t, WithDynamoDBLeases(testservers.StartMoto(t)), WithConfig(func(c *Config) {
		c.Lease.WaitBudget = "2s"
	}))
	CreateBucket(t, e.Client(t, e.RW), "pid1")
	return e
}

// Two s3cond processes with one hostname, both PID 1 (two replicas with
// host networking), share a lease table: racing If-None-Match: * PUTs of a
// key, one through each, get exactly one 200 in every round.
func TestOwnerCollisionTwoReplicasAsPID1(t *testing.T) {
	e := pid1Env(t)
	replicas := []*testservers.S3cond{e.startProxyAsPID1(t), e.startProxyAsPID1(t)}
	rounds := 20
	if testing.Short() {
		rounds = 8
	}
	for round := range rounds {
		key := fmt.Sprintf("/pid1/round-%d", round)
		statuses := make([]int, len(replicas))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, p := range replicas {
			wg.Go(func() {
				<-start
				resp, err := DoContext(t.Context(), p.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: key,
					Header: http.Header{"If-None-Match": {"*"}}, Body: []byte(fmt.Sprintf("replica %d", i))})
				if err != nil {
					t.Errorf("round %d, replica %d: %v", round, i, err)
					return
				}
				statuses[i] = resp.Status
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for i, s := range statuses {
			switch s {
			case http.StatusOK:
				wins++
			case http.StatusPreconditionFailed, http.StatusConflict:
			default:
				t.Errorf("round %d, replica %d: status %d, want 200, 412 or 409", round, i, s)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d PUTs with If-None-Match: * answered 200 (statuses %v), want exactly 1", round, wins, statuses)
		}
	}
}
