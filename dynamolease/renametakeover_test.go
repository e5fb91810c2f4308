package dynamolease_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// TookOverHeld is what gates a conditional write's look for a rename left
// half done (proxy/leasedwrite/renamefinish.go): true only for a row taken
// from a holder that never released it, so a write after an ordinary
// release pays no extra read.
func TestTookOverHeldOnlyFromAVanishedHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		vanished := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		next := dynamolease.NewCommitter(tbl, dynamolease.Options{WaitBudget: 2 * defaultTakeover}, zerolog.Nop())
		ctx := context.Background()

		created, err := vanished.Acquire(ctx, "b/held", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		if created.TookOverHeld() {
			t.Fatal("a created row was taken from nobody")
		}
		// The holder vanishes: never released, never renewed.
		taken, err := next.Acquire(ctx, "b/held", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !taken.TookOverHeld() {
			t.Fatal("a row taken after its holder vanished does not say so")
		}
		if err := taken.Release(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := next.Acquire(ctx, "b/held", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		if again.TookOverHeld() {
			t.Fatal("a row taken after a release says its holder vanished")
		}
		_ = again.Release(ctx)
	})
}
