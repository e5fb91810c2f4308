package tabletest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// HotKey: 8 goroutines of one process take and release the lease on one
// key of tbl in turn; ops/s is leases per second. Each store's
// BenchmarkHotKey runs it.
func HotKey(b *testing.B, tbl dynamolease.Table) {
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

// DistinctKeys: 16 goroutines each take and release leases on keys of tbl
// nobody else uses, as conditional creates of fresh objects do.
// background releases as the proxy does, without waiting
// (ReleaseNotAwaited). Each store's BenchmarkDistinctKeys runs it.
func DistinctKeys(b *testing.B, tbl dynamolease.Table, background bool) {
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
			if err := lease.ReleaseNotAwaited(ctx); err != nil {
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
