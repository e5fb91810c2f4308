package leasedwrite

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// bucketName is the bucket of these tests' targets.
const bucketName = "bucket"

// failingRenewTable stands for a lease store that creates rows but then
// cannot be reached for one key's renewals (a DynamoDB partition that
// starts throttling): that key's lease cannot be kept past half its life.
type failingRenewTable struct {
	dynamolease.Table
	failPath string
}

func (f *failingRenewTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	if r.Path == f.failPath {
		return nil, errors.New("lease store unreachable for this key")
	}
	return f.Table.Replace(ctx, r, seen)
}

// TestKeepHalfLeasesAnswersEachEntryOnce: a key listed twice, once with a
// stale ETag (already answered 412 by judgeEntries) and once with its own,
// whose lease is past half its life and cannot be renewed: the entry about
// to be sent gets the lease failure, the stale one keeps its single 412, and
// nothing of the key is sent.
// It runs in a synctest bubble: its wait is a moment on the lease's clock.
func TestKeepHalfLeasesAnswersEachEntryOnce(t *testing.T) {
	synctest.Test(t, keepHalfLeasesAnswersEachEntryOnce)
}

func keepHalfLeasesAnswersEachEntryOnce(t *testing.T) {
	const timeout = 400 * time.Millisecond
	table := &failingRenewTable{failPath: bucketName + "/k", Table: dynamolease.NewMemTable()}
	leases := dynamolease.NewCommitter(table, dynamolease.Options{Timeout: timeout, MaxClockSkewRate: 2,
		PollInterval: 20 * time.Millisecond, TTL: time.Hour, WaitBudget: 5 * time.Second, Owner: "leasedwrite-test"}, zerolog.Nop())
	w := New(Options{Leases: leases, LeaseTimeout: timeout, Log: zerolog.Nop()})
	lease, err := leases.Acquire(context.Background(), bucketName+"/k", `"aaaa"`, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What the guard judges is the lease's age: the bubble's clock moves
	// to just past half its life.
	time.Sleep(time.Until(lease.Deadline().Add(-timeout/2)) + time.Millisecond)
	if lease.Remaining() >= timeout/2 {
		t.Fatalf("the lease has %s left, not under half its life", lease.Remaining())
	}
	current, stale := s3xml.ObjectIdentifier{Key: "k", ETag: `"aaaa"`}, s3xml.ObjectIdentifier{Key: "k", ETag: `"bbbb"`}
	k := &deleteKey{leasePath: bucketName + "/k", entries: []s3xml.ObjectIdentifier{current, stale}, lease: lease}
	result := &s3xml.DeleteResult{Errors: []s3xml.DeleteError{s3xml.EntryError(stale, s3err.New(s3err.PreconditionFailed))}}
	req := Request{Ctx: context.Background(), Target: operation.Target{Bucket: bucketName},
		LeasePath: func(t operation.Target) string { return t.Bucket + "/" + t.Key }}
	send := w.keepHalfLeases(req, []*deleteKey{k}, []s3xml.ObjectIdentifier{{Key: "k"}}, result)
	if len(send) != 0 {
		t.Fatalf("sent %v under a lease that could not be kept", send)
	}
	var codes []string
	for _, e := range result.Errors {
		codes = append(codes, e.Code)
	}
	if len(codes) != 2 || slices.Index(codes, "PreconditionFailed") < 0 || codes[0] == codes[1] {
		t.Fatalf("answers for k: %v; want the stale entry's one 412 and one lease failure", codes)
	}
}
