package dynamolease_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// BenchmarkHotKey: 8 goroutines of one process take and release the lease on
// one key in turn; ops/s is leases per second.
func BenchmarkHotKey(b *testing.B) {
	b.Run("mem", func(b *testing.B) { benchmarkHotKey(b, dynamolease.NewMemTable()) })
	b.Run("bolt", func(b *testing.B) {
		tbl, err := dynamolease.OpenBolt(filepath.Join(b.TempDir(), "leases.db"), dynamolease.BoltOptions{})
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

// BenchmarkDistinctKeys: 16 goroutines each take and release leases on keys
// nobody else uses, as conditional creates of fresh objects do. On the bolt
// table they share fsyncs through its group commit. "background" releases
// as the proxy does, without waiting (NotAwaited): those releases wait to
// share the next acquire's commit.
func BenchmarkDistinctKeys(b *testing.B) {
	for _, background := range []bool{false, true} {
		name := "bolt"
		if background {
			name = "bolt-background-release"
		}
		b.Run(name, func(b *testing.B) { benchmarkDistinctKeys(b, background) })
	}
}

func benchmarkDistinctKeys(b *testing.B, background bool) {
	tbl, err := dynamolease.OpenBolt(filepath.Join(b.TempDir(), "leases.db"), dynamolease.BoltOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tbl.Close()
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	ctx := context.Background()
	var next atomic.Int64
	var releases sync.WaitGroup
	release := func(lease *dynamolease.Lease) {
		if !background {
			if err := lease.Release(ctx); err != nil {
				b.Error(err)
			}
			return
		}
		releases.Add(1)
		go func() {
			defer releases.Done()
			if err := lease.Release(dynamolease.NotAwaited(ctx)); err != nil {
				b.Error(err)
			}
		}()
	}
	b.SetParallelism(8) // 16 goroutines on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key := "bucket/k" + strconv.FormatInt(next.Add(1), 10)
			lease, err := c.Acquire(ctx, key, "*", nil)
			if err != nil {
				b.Error(err)
				return
			}
			release(lease)
		}
	})
	releases.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
