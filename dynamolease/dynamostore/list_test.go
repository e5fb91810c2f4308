package dynamostore_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func TestDynamoListerOnMoto(t *testing.T) {
	client := dynamoClient(t, testservers.StartMoto(t))
	t.Run("BucketKey", func(t *testing.T) {
		tbl := newDynamoTable(t, client)
		tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return tbl })
	})
	t.Run("ArrowRSKeys", func(t *testing.T) {
		plain := newDynamoTable(t, client)
		tbl := dynamostore.New(client, plain.Name(), dynamostore.WithArrowRSKeys("bucket"))
		tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return tbl })
	})
}
