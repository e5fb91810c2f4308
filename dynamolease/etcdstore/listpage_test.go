package etcdstore_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func TestEtcdListPageOnThreeMembers(t *testing.T) {
	cluster := testservers.StartEtcdCluster(t)
	tbl, _ := etcdTable(t, cluster)
	tabletest.RunPageLister(t, tbl)
}
