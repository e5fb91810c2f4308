package dynamolease_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// BenchmarkHotKey: 8 goroutines of one process take and release the lease on
// one key in turn; ops/s is leases per second.
func BenchmarkHotKey(b *testing.B) {
	b.Run("mem", func(b *testing.B) { benchmarkHotKey(b, dynamolease.NewMemTable()) })
	b.Run("bolt", func(b *testing.B) {
		tbl, err := dynamolease.OpenBolt(filepath.Join(b.TempDir(), "leases.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer tbl.Close()
		benchmarkHotKey(b, tbl)
	})
}

func benchmarkHotKey(b *testing.B, tbl dynamolease.Table) {
	const goroutines = 8
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	ctx := context.Background()
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	b.ResetTimer()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				lease, err := c.Acquire(ctx, "bucket/hot", "*", nil)
				if err != nil {
					b.Error(err)
					return
				}
				if err := lease.Release(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
