package dynamolease_test

import (
	"context"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestMemTableConformance(t *testing.T) {
	tabletest.Run(t, func(t *testing.T) dynamolease.Table { return dynamolease.NewMemTable() })
}
