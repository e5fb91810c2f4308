package etcdstore_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

// BenchmarkHotKey: tabletest.HotKey on a three-member etcd cluster started
// here.
func BenchmarkHotKey(b *testing.B) {
	b.Run("etcd", func(b *testing.B) { tabletest.HotKey(b, benchEtcd(b)) })
}

// BenchmarkDistinctKeys: tabletest.DistinctKeys on a three-member etcd
// cluster.
func BenchmarkDistinctKeys(b *testing.B) {
	b.Run("etcd", func(b *testing.B) { tabletest.DistinctKeys(b, benchEtcd(b), false) })
}

// benchEtcd starts a three-member etcd cluster for the benchmark; each run
// of the benchmark function (b.N grows) gets its own.
func benchEtcd(b *testing.B) dynamolease.Table {
	tbl, _ := etcdTable(b, testservers.StartEtcdCluster(b))
	return tbl
}
