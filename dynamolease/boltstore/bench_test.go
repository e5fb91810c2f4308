package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

// BenchmarkHotKey: tabletest.HotKey on a bolt file.
func BenchmarkHotKey(b *testing.B) {
	b.Run("bolt", func(b *testing.B) { tabletest.HotKey(b, benchBolt(b)) })
}

// BenchmarkDistinctKeys: tabletest.DistinctKeys on a bolt file, where
// concurrent writers share fsyncs through its group commit, and background
// releases wait to share the next acquire's commit.
func BenchmarkDistinctKeys(b *testing.B) {
	b.Run("bolt", func(b *testing.B) { tabletest.DistinctKeys(b, benchBolt(b), false) })
	b.Run("bolt-background-release", func(b *testing.B) { tabletest.DistinctKeys(b, benchBolt(b), true) })
}

func benchBolt(b *testing.B) dynamolease.Table {
	tbl, err := boltstore.Open(filepath.Join(b.TempDir(), "leases.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tbl.Close() })
	return tbl
}
