package dynamolease

import (
	"context"
	"errors"
	"time"
)

// Rename notes (SPEC §3, "RenameObject"): s3cond's RenameObject keeps two
// kinds of record in the lease table, each a row of its own beside a key's
// lease rows, so no store needs a new attribute: the note's text is the
// row's key_state, stored as an "exists" state whose ETag is the text (an
// "absent" state is no note). Their sort keys start with "#", which no
// lease row's has (an ETag as S3 returns it is quoted, a create is "*"):
//
//   - (key's path, RenameLockETag): a lease like any other, held by a
//     rename of the key, or by whoever finishes a rename of it that its
//     holder left unfinished, while it reads or writes the key's intent;
//   - (key's path, renameIntentETag): the intent, written under the lock
//     before the rename's copy and cleared after its delete;
//   - (a path of the caller's, renameTokenETag): a client token's answer
//     (x-amz-client-token), kept until the row's TTL; the same path's
//     RenameLockETag row is a lease held by a rename carrying the token
//     while it runs, so a second request with it waits, then replays.
//
// A note is written whole by one writer at a time (the lock's holder, or
// the winner of a create), so a plain conditional replace suffices.
const (
	// RenameLockETag is the sort key of a key's rename lock row.
	RenameLockETag   = "#rename"
	renameIntentETag = "#rename-intent"
	renameTokenETag  = "#rename-token"
)

// ErrNoteTaken is PutRenameToken's answer when a live token row exists.
var ErrNoteTaken = errors.New("dynamolease: the note is already written")

// RenameIntent reads the rename intent recorded on path; "" when none.
func (c *Committer) RenameIntent(ctx context.Context, path string) (string, error) {
	row, err := c.getNote(ctx, path, renameIntentETag)
	if err != nil || row == nil {
		return "", err
	}
	return noteText(row), nil
}

// PutRenameIntent records text as path's rename intent ("" clears it).
// Call it holding path's RenameLockETag lease.
func (c *Committer) PutRenameIntent(ctx context.Context, path, text string) error {
	row, err := c.getNote(ctx, path, renameIntentETag)
	if err != nil {
		return err
	}
	if row == nil && text == "" {
		return nil
	}
	return c.writeNote(ctx, row, c.note(path, renameIntentETag, text, c.opts.TTL))
}

// RenameToken reads the text of a live token row at path; found is false
// when there is none or its TTL has passed.
func (c *Committer) RenameToken(ctx context.Context, path string) (text string, found bool, err error) {
	row, err := c.getNote(ctx, path, renameTokenETag)
	if err != nil || row == nil || !time.Now().Before(row.TTL) {
		return "", false, err
	}
	return noteText(row), true, nil
}

// PutRenameToken writes a token row at path, kept for ttl (rounded up to
// whole seconds, as TTLs are stored). A live row there already is
// ErrNoteTaken; an expired one is replaced.
func (c *Committer) PutRenameToken(ctx context.Context, path, text string, ttl time.Duration) error {
	row, err := c.getNote(ctx, path, renameTokenETag)
	if err != nil {
		return err
	}
	if row != nil && time.Now().Before(row.TTL) {
		return ErrNoteTaken
	}
	err = c.writeNote(ctx, row, c.note(path, renameTokenETag, text, ttl+time.Second))
	if errors.Is(err, ErrConditionFailed) {
		return ErrNoteTaken // another writer's row landed first
	}
	return err
}

func (c *Committer) note(path, etag, text string, ttl time.Duration) Record {
	state := KeyState{}
	if text != "" {
		state = KeyState{Exists: true, ETag: text}
	}
	return Record{
		Path: path, ETag: etag, Generation: firstGeneration(), Timeout: c.opts.Timeout,
		TTL: time.Now().Add(ttl), Owner: c.ownerPrefix, Released: true, KeyState: &state,
	}
}

func noteText(row *Record) string {
	if row.KeyState == nil || !row.KeyState.Exists || row.Unreadable != "" {
		return ""
	}
	return row.KeyState.ETag
}

func (c *Committer) getNote(ctx context.Context, path, etag string) (*Record, error) {
	call, done := tableCall(ctx)
	row, err := c.table.Get(call, path, etag)
	done()
	if err != nil {
		return nil, c.storeError(ctx, "get", err)
	}
	return row, nil
}

// writeNote creates r, or replaces seen (the row as last read) with it;
// ErrConditionFailed when another writer's row came between.
func (c *Committer) writeNote(ctx context.Context, seen *Record, r Record) error {
	call, done := tableCall(ctx)
	defer done()
	var err error
	if seen == nil {
		_, err = c.table.Create(call, r)
	} else {
		r.Generation = seen.Generation + 1
		_, err = c.table.Replace(call, r, seen.Generation)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrConditionFailed):
		return err
	}
	return c.storeError(ctx, "note", err)
}
