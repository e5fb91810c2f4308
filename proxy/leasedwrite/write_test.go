package leasedwrite

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
)

// absentObject stands for the store's HEAD (proxy's callState) of a key
// that holds no object yet; it has no copy source or parts to measure.
type absentObject struct{}

func (absentObject) Head(context.Context, operation.Target) (precondition.ObjectState, error) {
	return precondition.ObjectState{}, nil
}
func (absentObject) CopySourceSize(context.Context) (int64, error) { return 0, nil }
func (absentObject) PartsTotal(context.Context) (int64, error)     { return 0, nil }

// recordingSender stands for proxy's leasedSender around forward: it calls
// the Guard's hooks where forward does (BeforeFinalByte as the body's last
// byte would leave, BeforeSuccess on the store's 2xx), and notes, at each
// step, whether the write's lease row was held then.
type recordingSender struct {
	t      *testing.T
	table  dynamolease.Table
	length int64
	steps  []string
}

func (s *recordingSender) note(step string) {
	row, err := s.table.Get(context.Background(), "bucket/k", "*")
	if err != nil {
		s.t.Fatal(err)
	}
	held := row != nil && !row.Released
	s.steps = append(s.steps, step+map[bool]string{true: " (held)", false: " (not held)"}[held])
}

func (s *recordingSender) BodyLength() int64 { return s.length }

func (s *recordingSender) BufferBody() error { s.note("buffer"); return nil }

func (s *recordingSender) Send(g Guard) bool {
	s.note("send")
	if !g.Enforced || g.Ctx == nil {
		s.t.Errorf("the guard neither strips the client's conditions nor gives a context: %+v", g)
	}
	if err := g.BeforeFinalByte(); err != nil {
		s.t.Fatalf("before the final byte: %v", err)
	}
	s.note("final byte")
	if err := g.BeforeSuccess(); err != nil {
		s.t.Fatalf("before the success: %v", err)
	}
	return true
}

func (s *recordingSender) Fail(err error) { s.t.Fatalf("the write failed: %v", err) }

// Each mode orders the lease and the send as docs/spec.md §3 and §4 say:
// a streamed body under HoldBack is sent before its lease, which is taken
// before its final byte; under LeaseFirst the lease comes before the first
// byte; a small body is read whole before its lease and sent after.
func TestEachModeOrdersTheLeaseAndTheSend(t *testing.T) {
	const streamed, small = 1 << 30, 4 << 10
	for _, tc := range []struct {
		name   string
		kind   Kind
		length int64
		cond   Condition
		want   []string
	}{
		// A create names its lease up front (If-None-Match: *), yet a
		// streamed body is leased only once it is in.
		{"streamed, hold-back", HoldBack, streamed, precondition.Create(), []string{"send (not held)", "final byte (held)"}},
		{"streamed, lease-first", LeaseFirst, streamed, precondition.Create(), []string{"send (held)", "final byte (held)"}},
		// Strict mode's unconditional write has no early lease: its ETag
		// is the state's (a create's small body would race its early lease).
		{"small body", HoldBack, small, precondition.AnyState{}, []string{"buffer (not held)", "send (held)", "final byte (held)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := dynamolease.NewMemTable()
			leases := dynamolease.NewCommitter(table, dynamolease.Options{Timeout: 5 * time.Second, MaxClockSkewRate: 2,
				PollInterval: 20 * time.Millisecond, TTL: time.Hour, WaitBudget: 3 * time.Second, Owner: "leasedwrite-test"}, zerolog.Nop())
			w := New(Options{Leases: leases, LeaseTimeout: 5 * time.Second, Log: zerolog.Nop()})
			sender := &recordingSender{t: t, table: table, length: tc.length}
			req := Request{
				ID: "test", Op: operation.PutObject, Target: operation.Target{Bucket: "bucket", Key: "k", RawKey: "k"},
				Ctx: t.Context(), Mode: Mode{Kind: tc.kind}, ClientBodyLength: tc.length, State: absentObject{},
				LeasePath: func(t operation.Target) string { return t.Bucket + "/" + t.Key },
			}
			w.Run(req, tc.cond, sender)
			if len(sender.steps) != len(tc.want) {
				t.Fatalf("steps %q, want %q", sender.steps, tc.want)
			}
			for i := range tc.want {
				if sender.steps[i] != tc.want[i] {
					t.Fatalf("steps %q, want %q", sender.steps, tc.want)
				}
			}
			if err := w.WaitForReleases(t.Context()); err != nil {
				t.Fatal(err)
			}
			if row, _ := table.Get(context.Background(), "bucket/k", "*"); row == nil || !row.Released {
				t.Fatalf("after the write the row is %+v, want it released", row)
			}
		})
	}
}

// The store's checked condition travels in the Guard: a create is sent
// with If-None-Match: * where the mode says the store checks it.
func TestGuardCarriesTheConditionTheStoreChecks(t *testing.T) {
	checks := StoreChecks{IfNoneMatch: map[operation.Operation]bool{operation.PutObject: true}}
	req := Request{Op: operation.PutObject, Mode: Mode{Kind: HoldBack, Checks: checks}}
	if got := storeCondition(req, precondition.Create()); got.Get(precondition.HeaderIfNoneMatch) != "*" {
		t.Fatalf("condition sent with a create: %v, want If-None-Match: *", got)
	}
	req.Mode.Checks = StoreChecks{}
	if got := storeCondition(req, precondition.Create()); got != nil {
		t.Fatalf("condition sent to a store that checks none: %v", got)
	}
	req.Mode.Checks = checks
	if got := storeCondition(req, precondition.AnyState{}); got != nil {
		t.Fatalf("condition sent with strict mode's unconditional write: %v", got)
	}
}
