package dynamolease

import "context"

// LazyReplacer is a Table that can hold back a write nobody waits for, to
// share a commit with the next one (the embedded bolt table: see its
// lazyCommitDelay). The Committer uses it only for a release made with
// ReleaseNotAwaited, of a row no goroutine of this process wants next. A
// Table that wraps another should implement it with ReplaceLazily, so the
// hint reaches the table beneath.
type LazyReplacer interface {
	// ReplaceLazily is Replace for a write no goroutine waits for: it may
	// wait briefly for company before it commits.
	ReplaceLazily(ctx context.Context, r Record, seen uint64) (current *Record, err error)
}

// ReplaceLazily is t's ReplaceLazily if t has one, else its Replace.
func ReplaceLazily(ctx context.Context, t Table, r Record, seen uint64) (*Record, error) {
	if lazy, ok := t.(LazyReplacer); ok {
		return lazy.ReplaceLazily(ctx, r, seen)
	}
	return t.Replace(ctx, r, seen)
}
