package dynamostore_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func TestDynamoListPageOnMoto(t *testing.T) {
	client := dynamoClient(t, testservers.StartMoto(t))
	t.Run("BucketKey", func(t *testing.T) { tabletest.RunPageLister(t, newDynamoTable(t, client)) })
	t.Run("ArrowRSKeys", func(t *testing.T) {
		plain := newDynamoTable(t, client)
		tabletest.RunPageLister(t, dynamostore.New(client, plain.Name(), dynamostore.WithArrowRSKeys("bucket")))
	})
}
