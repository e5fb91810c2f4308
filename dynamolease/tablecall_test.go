package dynamolease

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A table request outlives its caller's cancellation by the grace, and no
// longer: the write in flight learns its outcome, a store that hangs is
// still cut off.
func TestTableCallOutlivesItsCallerByTheGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		call, done := tableCall(ctx)
		defer done()
		cancel()
		time.Sleep(tableCallGrace - time.Nanosecond)
		synctest.Wait()
		if err := call.Err(); err != nil {
			t.Fatalf("table call cancelled %s after its caller: %v; want it to go on for the grace", tableCallGrace-time.Nanosecond, err)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if call.Err() == nil {
			t.Fatal("table call still running after the grace")
		}
	})
}

// A call that ends before its caller's context leaves no timer behind.
func TestTableCallDoneBeforeCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		call, done := tableCall(ctx)
		done()
		if call.Err() == nil {
			t.Fatal("a finished call's context is still live")
		}
		cancel()
		synctest.Wait() // a grace timer left running would keep the bubble from ending
	})
}
