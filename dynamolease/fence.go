package dynamolease

import "time"

// A takeover conditioned on the generation alone takes any row at that
// generation, not only the one its writer watched: a row born at generation
// 0 (every row arrow-rs creates, and every row of an s3cond from before
// random first generations, during a rolling upgrade) that vanished at its
// TTL and was created anew between the waiter's last read and its due
// takeover is the same generation again, and its live holder loses the
// lease to a waiter that never saw it. So a takeover also carries the rest
// of the row it saw (Record.Fence), and each Table writes only if the
// stored row is still that one. The owner tells apart rows of two s3cond
// writers; the TTL, rows of two arrow-rs writers (who write no owner): a
// row is swept only after its TTL, and the one created after the sweep has
// a later TTL. A row that vanished and came back with the same owner, TTL,
// timeout and generation within one second is beyond the fence: only a
// hand deleting rows makes one.

// Fence is what a writer saw of a row besides its generation, in the units
// a table stores (Normalise): a Replace carrying it lands only if the row
// still shows all of it.
type Fence struct {
	Owner   string
	TTL     time.Time // zero: the row had none
	Timeout time.Duration
}

// FenceOf is the fence of row as read, for a takeover of it. An unreadable
// row has none: its fields are not what is stored, and each Table takes it
// over on a fresh read of the stored row instead (replaceUnreadable).
func FenceOf(row *Record) *Fence {
	if row == nil || row.Unreadable != "" || unsafeGenerationOnlyTakeover {
		return nil
	}
	n := Normalise(*row)
	return &Fence{Owner: n.Owner, TTL: n.TTL, Timeout: n.Timeout}
}

// Matches reports whether a stored row, as its Table decodes it, is the one
// the fence saw. A nil fence matches every row (renewals and releases of
// the writer's own row).
func (f *Fence) Matches(stored Record) bool {
	if f == nil {
		return true
	}
	s := Normalise(stored)
	return s.Unreadable == "" && s.Owner == f.Owner && s.TTL.Equal(f.TTL) && s.Timeout == f.Timeout
}
