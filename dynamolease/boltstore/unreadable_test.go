package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

// unreadableRows are hand-written lease rows whose numbers s3cond cannot use.
var unreadableRows = []struct{ name, value string }{
	{"text generation", `{"generation":"abc","timeout":1000}`},
	{"missing timeout", `{"generation":0}`},
	{"absurd timeout", `{"generation":0,"timeout":9000000000000000}`},
	{"generation at the top of uint64", `{"generation":18446744073709551615,"timeout":1000}`},
}

// An unreadable row is held for the reader's own timeout × skew, then taken
// over and rewritten readable (tabletest.HeldThenTakenOver).
func TestUnreadableRowsAreHeldForABoundedTime(t *testing.T) {
	for _, row := range unreadableRows {
		t.Run(row.name, func(t *testing.T) {
			tbl := openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
			if err := tbl.PutRawRow("b/k", "*", []byte(row.value)); err != nil {
				t.Fatal(err)
			}
			tabletest.HeldThenTakenOver(t, tbl)
		})
	}
}
