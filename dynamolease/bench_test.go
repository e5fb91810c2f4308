package dynamolease_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

// BenchmarkHotKey: tabletest.HotKey on the in-memory table, the protocol's
// own cost; each store's package benchmarks the store (its
// BenchmarkHotKey/bolt, /etcd, /moto).
func BenchmarkHotKey(b *testing.B) {
	b.Run("mem", func(b *testing.B) { tabletest.HotKey(b, dynamolease.NewMemTable()) })
}
