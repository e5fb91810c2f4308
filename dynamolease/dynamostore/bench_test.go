package dynamostore_test

import (
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

// BenchmarkHotKey: tabletest.HotKey on moto standing in for DynamoDB (in
// one process, serialised: far slower than DynamoDB).
func BenchmarkHotKey(b *testing.B) {
	b.Run("moto", func(b *testing.B) { tabletest.HotKey(b, benchMoto(b)) })
}

// BenchmarkDistinctKeys: tabletest.DistinctKeys on moto.
func BenchmarkDistinctKeys(b *testing.B) {
	b.Run("moto", func(b *testing.B) { tabletest.DistinctKeys(b, benchMoto(b), false) })
}

func benchMoto(b *testing.B) dynamolease.Table {
	client := dynamoClient(b, testservers.StartMoto(b))
	name := "bench-leases"
	if err := dynamostore.CreateTable(testContext(b, 60*time.Second), client, name); err != nil {
		b.Fatal(err)
	}
	return dynamostore.New(client, name)
}
