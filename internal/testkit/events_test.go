package testkit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestWaitForReturnsAnItemReportedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var e Events[int]
		e.Add(1)
		go func() {
			time.Sleep(time.Second) // in the bubble: no real time passes
			e.Add(2)
			e.Add(3)
		}()
		if got := e.WaitFor(t, "an even item", func(v int) bool { return v%2 == 0 }); got != 2 {
			t.Fatalf("got %d, want 2", got)
		}
		if got := e.WaitFor(t, "the first item", func(v int) bool { return v == 1 }); got != 1 {
			t.Fatalf("got %d, want 1 (reported before the wait)", got)
		}
	})
}

func TestWaitForGivesUpOnAnEventThatNeverComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var e Events[string]
		e.Add("other")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, err := e.waitFor(ctx, func(v string) bool { return v == "missing" }); err == nil {
			t.Fatal("a wait for an item never reported ended without an error")
		}
	})
}

func TestWaitForCountCountsWhatCameBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var e Events[string]
		e.Add("a")
		go func() {
			time.Sleep(time.Second)
			e.Add("b")
			e.Add("c")
		}()
		e.WaitForCount(t, "three items", 3)
		if got := len(e.All()); got != 3 {
			t.Fatalf("%d items when the wait ended, want 3", got)
		}
	})
}
