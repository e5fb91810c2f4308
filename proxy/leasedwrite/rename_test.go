package leasedwrite

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// memBucket stands for a store's bucket as proxy's renameStore reaches it
// (HEAD, CopyObject, DeleteObject over the re-signer): objects by key,
// each its ETag, a copy keeping the source's ETag as stores copy an
// object uploaded whole. copying, if set, is called as a copy starts.
type memBucket struct {
	mu       sync.Mutex
	etags    map[string]string
	copying  func()
	deleting func()
}

func newMemBucket(etags map[string]string) *memBucket { return &memBucket{etags: etags} }

func (b *memBucket) Head(_ context.Context, key string) (precondition.ObjectState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	etag, ok := b.etags[key]
	return precondition.ObjectState{Exists: ok, ETag: etag}, nil
}

func (b *memBucket) Copy(_ context.Context, source, destination, sourceETag string) (bool, error) {
	if b.copying != nil {
		b.copying()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.etags[source] != sourceETag {
		return true, s3err.New(s3err.ConditionalRequestConflict)
	}
	b.etags[destination] = sourceETag
	return true, nil
}

func (b *memBucket) Delete(_ context.Context, key string) (bool, error) {
	if b.deleting != nil {
		b.deleting()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.etags, key)
	return true, nil
}

func (b *memBucket) LeasePath(key string) string { return "bucket/" + key }

// bucketState stands for proxy's callState over the same bucket: what a
// conditional write reads of it.
type bucketState struct{ *memBucket }

func (s bucketState) Head(ctx context.Context, t operation.Target) (precondition.ObjectState, error) {
	return s.memBucket.Head(ctx, t.Key)
}
func (bucketState) CopySourceSize(context.Context) (int64, error) { return 0, nil }
func (bucketState) PartsTotal(context.Context) (int64, error)     { return 0, nil }

// failedSender stands for proxy's leasedSender of a write expected to be
// answered before anything is sent: it keeps the answer.
type failedSender struct {
	t   *testing.T
	err error
}

func (s *failedSender) BodyLength() int64 { return 4 }
func (s *failedSender) BufferBody() error { return nil }
func (s *failedSender) Send(Guard) bool   { s.t.Error("the write was sent"); return true }
func (s *failedSender) Fail(err error)    { s.err = err }

func newRenameWriter(table *leasetest.Table) *Writer {
	return New(Options{Leases: table.Committer("s3cond", leasetest.Timing{}), LeaseTimeout: 5 * time.Second, Log: zerolog.Nop()})
}

func renameOf(ctx context.Context, store RenameStore, source, destination string) RenameRequest {
	return RenameRequest{ID: "test", Ctx: ctx, Bucket: "bucket", Source: source, Destination: destination, Store: store,
		Evaluate: func(src, _ precondition.ObjectState) error {
			if !src.Exists {
				return s3err.New(s3err.NoSuchKey)
			}
			return nil
		}}
}

// A rename takes and releases its leases, and leaves no intent behind.
func TestRenameMovesUnderItsLeases(t *testing.T) {
	table := leasetest.New(leasetest.Hooks{})
	store := newMemBucket(map[string]string{"src": `"1"`})
	w := newRenameWriter(table)
	if err := w.Rename(renameOf(t.Context(), store, "src", "dst")); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Head(t.Context(), "dst"); !got.Exists || got.ETag != `"1"` {
		t.Fatalf("destination %+v", got)
	}
	if got, _ := store.Head(t.Context(), "src"); got.Exists {
		t.Fatalf("source still there: %+v", got)
	}
	for _, row := range [][2]string{{"bucket/src", dynamolease.RenameLockETag}, {"bucket/dst", dynamolease.RenameLockETag}, {"bucket/src", `"1"`}, {"bucket/dst", "*"}} {
		if r := table.Row(t, row[0], row[1]); r == nil || !r.Released {
			t.Fatalf("row %q after the rename: %+v, want it released", row, r)
		}
	}
	if text, err := w.leases.RenameIntent(t.Context(), "bucket/src"); err != nil || text != "" {
		t.Fatalf("the intent is still there: %q %v", text, err)
	}
}

// A rename whose holder vanished after its copy (its rows held, never
// released; its intent recorded, stage copied) is finished by the next
// conditional writer that takes one of its rows: a write on the source's
// old ETag then finds the source gone (404), and the destination keeps
// the copy. It fails in the s3cond_unsafe_ignore_rename_intents build.
func TestRenameLeftByAVanishedHolderIsFinishedByTheNextWriter(t *testing.T) {
	table := leasetest.New(leasetest.Hooks{})
	const etag = `"1"`
	store := newMemBucket(map[string]string{"src": etag, "dst": etag}) // the copy landed
	ctx := context.Background()
	vanished := table.Committer("vanished", leasetest.Timing{Timeout: 100 * time.Millisecond})
	src, dst := "bucket/src", "bucket/dst"
	for _, row := range [][2]string{{src, dynamolease.RenameLockETag}, {dst, dynamolease.RenameLockETag}, {src, etag}, {dst, "*"}, {dst, etag}} {
		if _, err := vanished.Acquire(ctx, row[0], row[1], nil); err != nil {
			t.Fatal(err)
		}
	}
	intent := renameIntent{Bucket: "bucket", Source: "src", Destination: "dst", SourceETag: etag, Stage: stageCopied, CopyETag: etag}
	for _, path := range []string{src, dst} {
		if err := vanished.PutRenameIntent(ctx, path, intent.encode()); err != nil {
			t.Fatal(err)
		}
	}
	w := newRenameWriter(table)
	sender := &failedSender{t: t}
	w.Run(Request{
		ID: "test", Op: operation.PutObject, Target: operation.Target{Bucket: "bucket", Key: "src", RawKey: "src"},
		Ctx: ctx, Mode: Mode{Kind: HoldBack}, ClientBodyLength: 4, State: bucketState{store}, Renames: store,
		LeasePath: func(t operation.Target) string { return store.LeasePath(t.Key) },
	}, precondition.ForETag(etag), sender)
	if e := s3err.As(sender.err); sender.err == nil || e.Code != s3err.NoSuchKey {
		t.Fatalf("the next writer of the source: %v, want NoSuchKey (the rename finished first)", sender.err)
	}
	if got, _ := store.Head(ctx, "src"); got.Exists {
		t.Fatalf("source after the finished rename: %+v", got)
	}
	if got, _ := store.Head(ctx, "dst"); got.ETag != etag {
		t.Fatalf("destination: %+v", got)
	}
	if text, err := w.leases.RenameIntent(ctx, src); err != nil || text != "" {
		t.Fatalf("the intent is still there: %q %v", text, err)
	}
	if err := w.WaitForReleases(ctx); err != nil {
		t.Fatal(err)
	}
}

// Two requests racing with the same new client token (an SDK's retry sent
// while the first attempt still runs, through another s3cond of a fleet)
// both answer 200: the second waits for the first's token and replays it,
// rather than renaming a source the first already moved (404).
func TestRenameRacingTheSameClientTokenBothSucceed(t *testing.T) {
	var mu sync.Mutex
	creates := map[[2]string]int{}
	contended, once := make(chan struct{}), sync.Once{}
	table := leasetest.New(leasetest.Hooks{Before: func(_ context.Context, c leasetest.Call) error {
		if c.Op != leasetest.OpCreate {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		row := [2]string{c.Path, c.ETag}
		if creates[row]++; creates[row] == 2 { // the second request meets a row the first holds
			once.Do(func() { close(contended) })
		}
		return nil
	}})
	store := newMemBucket(map[string]string{"src": `"1"`})
	copyStarted, copyGoes := make(chan struct{}), make(chan struct{})
	store.copying = func() { close(copyStarted); <-copyGoes }
	first, second := newRenameWriter(table), newRenameWriter(table) // two s3conds of a fleet
	req := renameOf(t.Context(), store, "src", "dst")
	req.TokenPath, req.TokenDigest = "#rename-token/t", "digest"
	answers := make(chan error, 2)
	go func() { answers <- first.Rename(req) }()
	<-copyStarted
	store.copying = nil
	go func() { answers <- second.Rename(req) }()
	<-contended
	close(copyGoes)
	for range 2 {
		if err := <-answers; err != nil {
			t.Fatalf("a rename with the token answered %v, want 200 for both", err)
		}
	}
	if got, _ := store.Head(t.Context(), "dst"); got.ETag != `"1"` {
		t.Fatalf("destination %+v", got)
	}
}
