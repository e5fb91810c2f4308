package leasedwrite

import (
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
)

// An append assembled on the store names its work up front
// (Request.StoreWork): its PutObject's lease is sized to it at once, as a
// copy's is to its source, with no measure to wait for; without it a
// PutObject sends its bytes itself and has no sizing.
func TestStoreWorkSizesAPutObject(t *testing.T) {
	w := &Writer{leaseTimeout: 20 * time.Second, minStoreThroughput: DefaultMinStoreThroughput}
	if s := w.startSizing(Request{Op: operation.PutObject}); s != nil {
		t.Fatalf("a PutObject without store work is sized: %+v", s)
	}
	s := w.startSizing(Request{Op: operation.PutObject, StoreWork: 5 << 30})
	if s == nil {
		t.Fatal("an append's store work is not sized")
	}
	select {
	case <-s.done:
	default:
		t.Fatal("a known store work is waited for")
	}
	if want := w.leaseLengthFor(5 << 30); s.length != want || s.err != nil {
		t.Errorf("lease %s (%v), want %s", s.length, s.err, want)
	}
}
