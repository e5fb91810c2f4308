package dynamolease_test

import (
	"path/filepath"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func TestMemTableLister(t *testing.T) {
	tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return dynamolease.NewMemTable() })
}

func TestBoltTableLister(t *testing.T) {
	tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable {
		return openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
	})
}

func TestDynamoListerOnMoto(t *testing.T) {
	client := dynamoClient(t, testservers.StartMoto(t))
	t.Run("BucketKey", func(t *testing.T) {
		tbl := newDynamoTable(t, client)
		tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return tbl })
	})
	t.Run("ArrowRSKeys", func(t *testing.T) {
		plain := newDynamoTable(t, client)
		tbl := dynamolease.NewDynamoTable(client, plain.Name(), dynamolease.WithArrowRSKeys("bucket"))
		tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return tbl })
	})
}

func TestEtcdListerOnThreeMembers(t *testing.T) {
	cluster := testservers.StartEtcdCluster(t)
	tbl, _ := etcdTable(t, cluster)
	tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return tbl })
}
