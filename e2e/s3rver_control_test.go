package e2e

import (
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// The controls below run the races of races_test.go straight against
// s3rver, without s3cond, and require them to LOSE writes. They prove that
// the races measure something: the same race through s3cond on the same
// store (TestRaceCreate/s3rver, TestRaceCASCounter/s3rver) comes out right
// only because of s3cond's leases.

// directS3rver starts s3rver with one bucket and returns clients that talk
// to it directly with its own key (three, as the fleet has three processes).
func directS3rver(t *testing.T, bucket string) (*testservers.S3rver, []*s3.Client) {
	t.Helper()
	store := testservers.StartS3rver(t, bucket)
	cred := Credentials{store.AccessKey, store.Secret}
	var clients []*s3.Client
	for range 3 {
		clients = append(clients, NewS3Client(store.Endpoint, cred, nil))
	}
	return store, clients
}

// TestS3rverControlCreateRace: 32 concurrent If-None-Match: * creates of
// one key straight on s3rver: more than one is told it created the key.
func TestS3rverControlCreateRace(t *testing.T) {
	_, clients := directS3rver(t, "race")
	statuses := raceCreates(t, clients, "race", "once", 32)
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	t.Logf("outcomes straight on s3rver: %v", counts)
	if counts[200] <= 1 {
		t.Fatalf("%d creates succeeded straight on s3rver; the control needs more than one (s3rver ignores If-None-Match)", counts[200])
	}
}

// TestS3rverControlCASCounter: the CAS counter straight on s3rver loses
// increments: every If-Match PUT succeeds, and the counter ends below the
// number of successful increments.
func TestS3rverControlCASCounter(t *testing.T) {
	_, clients := directS3rver(t, "race")
	putBytes(t, t.Context(), clients[0], "race", "counter", []byte("0"))
	res := runCASCounter(t, clients, "race", "counter", 6, 8)
	final, err := strconv.Atoi(string(getBytes(t, t.Context(), clients[0], "race", "counter")))
	if err != nil {
		t.Fatalf("counter: %v", err)
	}
	t.Logf("straight on s3rver: %s; counter %d", res, final)
	if final >= res.successes {
		t.Fatalf("counter %d after %d successful increments: no update was lost, the control measured nothing", final, res.successes)
	}
}
