package dynamolease_test

import (
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

func TestMemTableLister(t *testing.T) {
	tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable { return dynamolease.NewMemTable() })
}
