package linearizability

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// Leases are timed on each process's own monotonic clock: a waiter counts
// timeout × skew from when it first saw a generation, and never compares
// its clock with another process's. These tests run one s3cond in a Linux
// time namespace whose monotonic and boot clocks are ten days ahead of the
// others'. A clock running at another *rate* cannot be simulated here (no
// faketime, no LD_PRELOAD; time namespaces only offset), and the wall clock
// (which only feeds SigV4 dates and the DynamoDB TTL) cannot be offset per
// process; docs/correctness.md states both limits.

const tenDays = 240 * time.Hour

func TestMonotonicOffsetHolderIsTakenOverOnTime(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true, MonotonicOffset: tenDays})
	requireMonotonicOffset(t, c.Proxies[0].Process, tenDays)
	killHolder(t, c, "k") // proxy 0, the one whose clocks are ahead
	requireTakeover(t, c, c.Client(1, 15*time.Second), "k")
}

func TestMonotonicOffsetProcessesStayLinearizable(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		MonotonicOffset: tenDays})
	requireMonotonicOffset(t, c.Proxies[0].Process, tenDays)
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	rec := record(t, w, recordingTime(t, 4*time.Second), nil)
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// requireMonotonicOffset checks that the s3cond forked by unshare really
// runs with the offset clock, so the tests above cannot pass vacuously.
func requireMonotonicOffset(t *testing.T, unshare *testservers.Process, offset time.Duration) {
	t.Helper()
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", unshare.Pid(), unshare.Pid()))
	if err != nil {
		t.Fatalf("find s3cond under unshare: %v", err)
	}
	fields := strings.Fields(string(children))
	if len(fields) != 1 {
		t.Fatalf("unshare has children %q; want one s3cond", fields)
	}
	offsets, err := os.ReadFile("/proc/" + fields[0] + "/timens_offsets")
	if err != nil {
		t.Fatalf("read s3cond's time namespace offsets: %v", err)
	}
	want := fmt.Sprintf("monotonic %d 0", int64(offset.Seconds()))
	if !strings.Contains(strings.Join(strings.Fields(string(offsets)), " "), want) {
		t.Fatalf("s3cond's time namespace offsets are %q; want %q", offsets, want)
	}
}
