package dynamolease_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

func TestMemTableListPage(t *testing.T) {
	tabletest.RunPageLister(t, dynamolease.NewMemTable())
}
