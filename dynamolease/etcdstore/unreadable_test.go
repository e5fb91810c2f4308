package etcdstore_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

// unreadableRows are hand-written lease rows whose numbers s3cond cannot use.
var unreadableRows = []struct{ name, value string }{
	{"text generation", "abc\n{\"timeout\":1000}"},
	{"missing timeout", "00000000000000000000\n{}"},
	{"absurd timeout", "00000000000000000000\n{\"timeout\":9000000000000000}"},
	{"generation at the top of uint64", "18446744073709551615\n{\"timeout\":1000}"},
}

// An unreadable row is held for the reader's own timeout × skew, then taken
// over and rewritten readable (tabletest.HeldThenTakenOver), on etcd 3.4.
func TestUnreadableRowsAreHeldForABoundedTime(t *testing.T) {
	cluster := testservers.StartEtcdClusterOf(t, 1)
	for _, row := range unreadableRows {
		t.Run(row.name, func(t *testing.T) {
			tbl, client := etcdTable(t, cluster)
			if _, err := client.Put(t.Context(), tbl.Key("b/k", "*"), row.value); err != nil {
				t.Fatal(err)
			}
			tabletest.HeldThenTakenOver(t, tbl)
		})
	}
}
