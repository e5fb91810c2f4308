package linearizability

import (
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// unsafeAnswerUnconfirmed is the build tag of the negative control: a
// holder relays the store's success without confirming its lease.
const unsafeAnswerUnconfirmed = "s3cond_unsafe_answer_unconfirmed"

// confirmLeases are the sized-lease settings of the confirmation scenario:
// the copy's lease is LeaseTimeout + 16 s, so its first renewal (at half
// its length) comes long after the store answers; only a confirmation
// before the answer reads the row.
func confirmLeases(cfg *e2e.Config) {
	cfg.Lease.MaxSizedTimeout = (30 * time.Second).String()
	cfg.Lease.MinStoreMiBPerSecond = 0.25
}

// recordReleasedHolder: two s3cond on one DynamoDB lease table (moto).
// Proxy 0's conditional CopyObject onto k holds its sized lease, its copy
// held on the way to the store; an operator runs `s3cond leases release
// --force` on the row (issue 33 finding 5); a contender's create through
// proxy 1 is acknowledged; then the store does the copy and answers the
// holder, more than lease.timeout after the holder last confirmed its
// lease. Returns the history of the two creates, the holder's status and
// how many leases the holder's s3cond counts lost.
//
// The history holds no read of k after the copy: the store did the copy
// over the contender's create whatever the holder answers (that is what
// --force gives up), so a read would make every history illegal. What the
// holder controls is its answer: a 200 beside the contender's is two
// acknowledged winners of one If-None-Match: * (not linearizable); a 500
// is an outcome the client cannot know, which the checker may drop.
func recordReleasedHolder(t *testing.T, buildTags string) (rec *Recorder, status int, lost int64) {
	t.Helper()
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true, BuildTags: buildTags, EditConfig: confirmLeases})
	rec = NewRecorder()
	held := startHeldCopy(t, c, rec, 0, "k")
	sent := time.Now()
	releaseRowForced(t, c, "k")
	acked := make(chan struct{})
	if outcome := contend(t, c, rec, 1, "k", acked); outcome != OutcomeOK {
		t.Fatalf("the contender's create after the forced release: %s; want it acknowledged", outcome)
	}
	// The store answers the copy once the holder's last confirmation (the
	// lengthening, before the copy was sent) is older than lease.timeout.
	time.Sleep(time.Until(sent.Add(LeaseTimeout + 100*time.Millisecond)))
	held.conn.Resume()
	select {
	case resp := <-held.answer:
		held.op.Return(Output{Outcome: rawOutcome(resp, nil)})
		if resp != nil {
			status = resp.Status
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the holder never answered its copy")
	}
	lost = scrapeCounts(t, "http://"+c.AdminAddrs[0]+"/metrics", "s3cond_leases_lost_total")[0]
	t.Logf("the holder answered %d, %d leases counted lost; history %s", status, lost, rec.Stats())
	return rec, status, lost
}

// releaseRowForced runs `s3cond leases release --force` on key's create row
// at the generation the table holds, as an operator who believes its
// holder dead.
func releaseRowForced(t *testing.T, c *Cluster, key string) {
	t.Helper()
	items := newLeaseTableClient(c).scan(t)
	if len(items) != 1 {
		t.Fatalf("the lease table holds %d rows, want the holder's", len(items))
	}
	gen, ok := items[0]["generation"].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("the holder's row has no generation: %v", items[0])
	}
	if _, err := strconv.ParseUint(gen.Value, 10, 64); err != nil {
		t.Fatalf("generation %q: %v", gen.Value, err)
	}
	cfg := c.Config
	cfg.Server.Listen = "127.0.0.1:1" // not used by leases release
	dir, path := e2e.WriteConfigFile(t, cfg)
	cmd := exec.Command(testservers.BuildS3cond(t), "leases", "release", "--config", path, "--generation", gen.Value,
		"--yes", "--force", c.Bucket+"/"+key)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("s3cond leases release --force: %v\n%s", err, out)
	}
}

// TestLinearizableWhenAReleasedHolderAnswers: the holder confirms its lease
// before relaying the store's 200, finds it released and answers 500,
// counted in s3cond_leases_lost_total: one acknowledged winner.
func TestLinearizableWhenAReleasedHolderAnswers(t *testing.T) {
	t.Parallel()
	rec, status, lost := recordReleasedHolder(t, "")
	if status != http.StatusInternalServerError || lost != 1 {
		t.Errorf("the released holder answered %d, %d leases counted lost; want 500 and s3cond_leases_lost_total 1", status, lost)
	}
	RequireLinearizable(t, rec)
}

// TestNegativeControlUnconfirmedHolderAnswers: a holder that does not
// confirm its lease (the protocol before issue 33) answers 200 beside the
// contender's 200. The checker must find the history not linearizable.
func TestNegativeControlUnconfirmedHolderAnswers(t *testing.T) {
	t.Parallel()
	rec, status, _ := recordReleasedHolder(t, unsafeAnswerUnconfirmed)
	if status != http.StatusOK {
		t.Fatalf("the unconfirmed holder answered %d; want 200", status)
	}
	requireIllegal(t, rec, "a holder answering without confirming its lease")
}
