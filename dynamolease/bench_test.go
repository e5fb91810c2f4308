package dynamolease_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/testservers"
)

// BenchmarkHotKey: 8 goroutines of one process take and release the lease on
// one key in turn; ops/s is leases per second. The fleet stores run on real
// servers started here: a three-member etcd cluster, and moto standing in
// for DynamoDB (in one process, serialised: far slower than DynamoDB).
func BenchmarkHotKey(b *testing.B) {
	b.Run("mem", func(b *testing.B) { benchmarkHotKey(b, dynamolease.NewMemTable()) })
	b.Run("bolt", func(b *testing.B) { benchmarkHotKey(b, benchBolt(b)) })
	b.Run("etcd", func(b *testing.B) { benchmarkHotKey(b, benchEtcd(b)) })
	b.Run("moto", func(b *testing.B) { benchmarkHotKey(b, benchMoto(b)) })
}

func benchBolt(b *testing.B) dynamolease.Table {
	tbl, err := dynamolease.OpenBolt(filepath.Join(b.TempDir(), "leases.db"), dynamolease.BoltOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tbl.Close() })
	return tbl
}

// benchEtcd starts a three-member etcd cluster for the benchmark; each run
// of the benchmark function (b.N grows) gets its own.
func benchEtcd(b *testing.B) dynamolease.Table {
	tbl, _ := etcdTable(b, testservers.StartEtcdCluster(b))
	return tbl
}

func benchMoto(b *testing.B) dynamolease.Table {
	client := dynamoClient(b, testservers.StartMoto(b))
	name := "bench-leases"
	if err := dynamolease.CreateTable(testContext(b, 60*time.Second), client, name); err != nil {
		b.Fatal(err)
	}
	return dynamolease.NewDynamoTable(client, name)
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
// as the proxy does, without waiting (ReleaseNotAwaited): those releases wait to
// share the next acquire's commit.
func BenchmarkDistinctKeys(b *testing.B) {
	b.Run("bolt", func(b *testing.B) { benchmarkDistinctKeys(b, benchBolt(b), false) })
	b.Run("bolt-background-release", func(b *testing.B) { benchmarkDistinctKeys(b, benchBolt(b), true) })
	b.Run("etcd", func(b *testing.B) { benchmarkDistinctKeys(b, benchEtcd(b), false) })
	b.Run("moto", func(b *testing.B) { benchmarkDistinctKeys(b, benchMoto(b), false) })
}

func benchmarkDistinctKeys(b *testing.B, tbl dynamolease.Table, background bool) {
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
