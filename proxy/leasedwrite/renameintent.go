package leasedwrite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/precondition"
)

// A rename's intent (docs/spec.md, "RenameObject"): written on both keys'
// intent rows under both keys' rename locks before the copy, moved to
// "copied" with the copy's ETag before the delete, cleared after it. A
// rename whose holder vanished between its copy and its delete leaves it
// behind; whoever next holds either key's rename lock (the next rename of
// either key, or a conditional write that took over a vanished holder's
// row of either key) finishes it first.
type renameIntent struct {
	Bucket      string `json:"bucket"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	SourceETag  string `json:"source_etag"`
	// DestinationBefore is the destination's ETag before the copy, "" when
	// it was absent.
	DestinationBefore string `json:"destination_before"`
	Stage             string `json:"stage"` // stageCopying or stageCopied
	CopyETag          string `json:"copy_etag,omitempty"`
}

const (
	stageCopying = "copying"
	stageCopied  = "copied"
)

func (i renameIntent) encode() string {
	text, _ := json.Marshal(i) // strings only: cannot fail
	return string(text)
}

func decodeRenameIntent(text string) (renameIntent, error) {
	var i renameIntent
	if err := json.Unmarshal([]byte(text), &i); err != nil {
		return i, fmt.Errorf("decode rename intent: %w", err)
	}
	if i.Bucket == "" || i.Source == "" || i.Destination == "" || i.SourceETag == "" {
		return i, fmt.Errorf("decode rename intent: a field is missing")
	}
	return i, nil
}

// writeIntent records i on both keys' intent rows; the caller holds both
// keys' rename locks.
func (w *Writer) writeIntent(ctx context.Context, store RenameStore, i renameIntent) error {
	text := i.encode()
	for _, key := range []string{i.Source, i.Destination} {
		if err := w.leases.PutRenameIntent(ctx, store.LeasePath(key), text); err != nil {
			return fmt.Errorf("record rename intent on %q: %w", key, err)
		}
	}
	return nil
}

// clearIntent removes the intent from both keys' rows.
func (w *Writer) clearIntent(ctx context.Context, store RenameStore, i renameIntent) error {
	for _, key := range []string{i.Source, i.Destination} {
		if err := w.leases.PutRenameIntent(ctx, store.LeasePath(key), ""); err != nil {
			return fmt.Errorf("clear rename intent on %q: %w", key, err)
		}
	}
	return nil
}

// pendingIntent reads the intent left on key's row, if any.
func (w *Writer) pendingIntent(ctx context.Context, store RenameStore, key string) (*renameIntent, error) {
	if unsafeIgnoreRenameIntents {
		return nil, nil
	}
	text, err := w.leases.RenameIntent(ctx, store.LeasePath(key))
	if err != nil || text == "" {
		return nil, err
	}
	i, err := decodeRenameIntent(text)
	if err != nil {
		return nil, err
	}
	return &i, nil
}

// finishIntent completes or undoes a rename its holder left unfinished;
// the caller holds both of its keys' rename locks, so the holder is gone.
// If the source is still the version renamed and the copy landed (the
// destination holds the copy's ETag, or moved from where it was before
// the copy while no other leased writer could write it), the rename is
// finished by deleting the source; otherwise the copy never landed and
// the rename is undone by forgetting it. The intent is cleared either way.
func (w *Writer) finishIntent(ctx context.Context, store RenameStore, i renameIntent) error {
	src, dst, err := renameStates(ctx, store, i.Source, i.Destination)
	if err != nil {
		return err
	}
	if src.Exists && precondition.ETagsEqual(src.ETag, i.SourceETag) && copyLanded(i, dst) {
		if _, err := store.Delete(ctx, i.Source); err != nil {
			return err
		}
		w.log.Info().Str("bucket", i.Bucket).Str("source", i.Source).Str("destination", i.Destination).
			Msg("finished a rename its holder left between its copy and its delete")
	}
	return w.clearIntent(ctx, store, i)
}

func copyLanded(i renameIntent, dst precondition.ObjectState) bool {
	if !dst.Exists {
		return false
	}
	if i.Stage == stageCopied {
		return precondition.ETagsEqual(dst.ETag, i.CopyETag)
	}
	return i.DestinationBefore == "" || !precondition.ETagsEqual(dst.ETag, i.DestinationBefore)
}

// finishPending finishes whatever intent either key's row holds, under
// both keys' rename locks. An intent naming other keys (this key was the
// other end of a rename with a third key) is finished under that
// rename's own locks (finishElsewhere).
func (w *Writer) finishPending(ctx context.Context, store RenameStore, keys ...string) (finished bool, err error) {
	for _, key := range keys {
		i, err := w.pendingIntent(ctx, store, key)
		if err != nil || i == nil {
			if err != nil {
				return finished, err
			}
			continue
		}
		if !sameKeys(*i, keys) {
			if err := w.finishElsewhere(ctx, store, *i, key); err != nil {
				return finished, err
			}
		} else if err := w.finishIntent(ctx, store, *i); err != nil {
			return finished, err
		}
		finished = true
	}
	return finished, nil
}

func sameKeys(i renameIntent, keys []string) bool {
	return len(keys) == 2 && (i.Source == keys[0] && i.Destination == keys[1] || i.Source == keys[1] && i.Destination == keys[0])
}

// finishElsewhere finishes an intent on held (whose rename lock the
// caller holds) that names another key too: that key's lock is taken as
// well, out of key order, so a rename holding it and waiting for held
// makes one of the two give up after its wait budget (409), never both
// wait for ever.
func (w *Writer) finishElsewhere(ctx context.Context, store RenameStore, i renameIntent, held string) error {
	other := i.Source
	if other == held {
		other = i.Destination
	}
	lock, err := w.leases.Acquire(ctx, store.LeasePath(other), dynamolease.RenameLockETag, nil)
	if err != nil {
		return fmt.Errorf("take the rename lock of %q: %w", other, err)
	}
	locks := []*dynamolease.Lease{lock}
	defer w.releaseRenameLeases(ctx, locks)
	defer keepRenameLeases(ctx, locks)()
	guarded, stop := untilLeaseLost(ctx, locks)
	defer stop()
	return w.finishIntent(guarded, store, i)
}
