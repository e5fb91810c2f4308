package leasedwrite

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// largeSource stands for the store's HEAD of a CopyObject's 2 MiB source
// (proxy's callState); the copy's target is absent.
type largeSource struct{ absentObject }

func (largeSource) CopySourceSize(context.Context) (int64, error) { return 2 << 20, nil }

// releasedWhileCopying stands for proxy's leasedSender around forward on a
// store still copying a large source: once the copy was sent (the Guard's
// BeforeFinalByte), an operator releases its lease row (`s3cond leases
// release --force`), and the store answers 2xx a moment later than
// lease.timeout; the sender keeps what BeforeSuccess said of that answer.
type releasedWhileCopying struct {
	t       *testing.T
	table   dynamolease.Table
	path    string
	copying time.Duration
	answer  error
}

func (s *releasedWhileCopying) BodyLength() int64 { return 0 }
func (s *releasedWhileCopying) BufferBody() error { return nil }
func (s *releasedWhileCopying) Fail(err error) {
	s.t.Fatalf("the copy failed before it was sent: %v", err)
}

func (s *releasedWhileCopying) Send(g Guard) bool {
	if err := g.BeforeFinalByte(); err != nil {
		s.t.Fatalf("before the copy was sent: %v", err)
	}
	row, err := s.table.Get(context.Background(), s.path, "*")
	if err != nil || row == nil || row.Timeout < 30*time.Second {
		s.t.Fatalf("the copy's lease row %+v, %v; want a sized lease", row, err)
	}
	if _, err := dynamolease.ReleaseRow(context.Background(), s.table, s.path, "*", row.Generation); err != nil {
		s.t.Fatal(err)
	}
	// The store copies on; the bubble's clock moves when all else waits.
	time.Sleep(s.copying)
	s.answer = g.BeforeSuccess()
	return s.answer == nil
}

// TestReleasedSizedLeaseIsNotAnsweredAsASuccess: an operator releases (s3cond
// leases release, forced) the sized lease of a conditional CopyObject the
// store is still doing; its next renewal would come only at half its 32 s
// length. The holder must not relay the store's 200 (issue 33 finding 5:
// the copy answered 200 after a second writer's create was acknowledged on
// the key): its lease, last confirmed longer ago than lease.timeout, is
// read before the answer, found released, and the answer is 500, the lease
// counted lost. Without the read (Lease.Confirm; the build tag
// s3cond_unsafe_answer_unconfirmed) the answer is 200. The store's copy
// outlasts lease.timeout on the bubble's clock, not the machine's.
func TestReleasedSizedLeaseIsNotAnsweredAsASuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		table := dynamolease.NewMemTable()
		leases := dynamolease.NewCommitter(table, dynamolease.Options{Timeout: timeout, MaxClockSkewRate: 2,
			PollInterval: 10 * time.Millisecond, TTL: time.Hour, WaitBudget: time.Second, Owner: "leasedwrite-test"}, zerolog.Nop())
		// 64 KiB/s: the 2 MiB copy holds a 32 s lease.
		w := New(Options{Leases: leases, LeaseTimeout: timeout, MinStoreThroughput: 64 << 10, Log: zerolog.Nop()})
		sender := &releasedWhileCopying{t: t, table: table, path: "bucket/dst", copying: timeout + time.Millisecond}
		w.Run(Request{
			ID: "test", Op: operation.CopyObject, Target: operation.Target{Bucket: "bucket", Key: "dst", RawKey: "dst"},
			Ctx: t.Context(), Mode: Mode{Kind: HoldBack}, State: largeSource{},
			LeasePath: func(t operation.Target) string { return t.Bucket + "/" + t.Key },
		}, precondition.Create(), sender)
		var answer *s3err.Error
		if !errors.As(sender.answer, &answer) || answer.Code != s3err.InternalError {
			t.Fatalf("a copy whose lease was released while the store did it is answered %v, want InternalError", sender.answer)
		}
		if err := w.WaitForReleases(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
