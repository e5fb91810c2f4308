package dynamolease

import (
	"errors"
	"strings"
)

func isKeyStatesUnsupported(err error) bool { return errors.Is(err, ErrKeyStatesUnsupported) }

func isConditionFailed(err error) bool { return errors.Is(err, ErrConditionFailed) }

// Recorded key states (SPEC §3, "Recorded key states"; docs/correctness.md).
// Under lease.serialize: all-writes every write of a key holds the row of
// the version it replaces ("*" when the key is absent), so the row of the
// version the key is at is the one every next write must take. A holder
// that released after a write with a known outcome writes that outcome into
// its row (Lease.RecordOutcome), and, when the key moved to another
// version, creates that version's row released and vouching for it (a
// birth, births.go). A writer that takes over a released row vouching for
// the row's own version knows the key's state without reading the store:
// no write of the key can have happened since, for it would have had to
// take this very row, and the takeover is conditional on the generation
// the record was released at. Every other row write (acquire, renewal,
// takeover after a vanished holder, a release without a known outcome, a
// batch release, an older s3cond's writes) writes the row whole without a
// record, so a record never outlives the holder that wrote it.

// KeyState is the state of a key a lease row records: whether the key
// exists and, if so, its ETag in canonical form (quotes included), as the
// row's sort key names versions.
type KeyState struct {
	Exists bool
	ETag   string
}

// ErrKeyStatesUnsupported is what a Table returns when asked to store a
// record its rows cannot carry (arrow-rs keyed DynamoDB rows, which arrow-rs
// also writes and reads).
var ErrKeyStatesUnsupported = errors.New("dynamolease: this table's rows carry no recorded key states")

// absentKeyState is how a recorded absence is stored.
const absentKeyState = "absent"

// existsPrefix starts a recorded ETag as stored.
const existsPrefix = "exists "

// EncodeKeyState is a key state as the stores keep it: "absent", or
// "exists " and the ETag.
func EncodeKeyState(s KeyState) string {
	if !s.Exists {
		return absentKeyState
	}
	return existsPrefix + s.ETag
}

// DecodeKeyState reads a stored key state; nil for one it cannot read,
// which is then no record at all (the reader reads the store instead).
func DecodeKeyState(text string) *KeyState {
	switch {
	case text == absentKeyState:
		return &KeyState{}
	case strings.HasPrefix(text, existsPrefix) && len(text) > len(existsPrefix):
		return &KeyState{Exists: true, ETag: strings.TrimPrefix(text, existsPrefix)}
	}
	return nil
}

// version is the row sort key that names this state: "*" for absence.
func (s KeyState) version() string {
	if !s.Exists {
		return "*"
	}
	return s.ETag
}

// trustedKeyState is the key state a released row vouches for: its record,
// when the row is sound, was released, and records the row's own version.
// A record naming another version says where the key went from this one,
// not where it is now: it may have come back (an identical body has the
// same ETag; a deleted key can be created again) through other rows.
func trustedKeyState(row *Record) *KeyState {
	if row == nil || row.KeyState == nil || row.Unreadable != "" {
		return nil
	}
	if unsafeTrustAnyRecord {
		s := *row.KeyState
		return &s
	}
	if !VouchesForItself(*row) {
		return nil
	}
	s := *row.KeyState
	return &s
}
