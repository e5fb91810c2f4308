package leasedwrite

// Kind is how a store's conditional writes are served.
type Kind int

const (
	// HoldBack leases a write whose body streams while its body streams:
	// the final byte (or, on a store that reads aws-chunked streams, the
	// final chunk) waits for the lease and the re-check (SPEC §4), so the
	// first upload to finish wins, as on S3. The zero Kind: every store
	// whose upload stays invisible until its last byte.
	HoldBack Kind = iota
	// LeaseFirst takes the lease and re-checks before the first byte
	// leaves s3cond: for a store that shows an upload as it arrives and
	// keeps what it got of one cut short (backend.writes_in_place, or the
	// probe's in-place verdict), where a held-back byte guards nothing.
	LeaseFirst
	// Native forwards the conditions to the store, which enforces them
	// itself, and takes no lease.
	Native
)

// String names the kind as logs and metrics do.
func (k Kind) String() string {
	switch k {
	case LeaseFirst:
		return "lease-first"
	case Native:
		return "native"
	}
	return "hold-back"
}

// Mode is how one store's conditional writes are served, chosen by
// internal/app from the configuration and the start-up probe, and read
// per request (a store found worse at run time is switched to leasing at
// once). Whether a PutObject body travels framed (aws-chunked) is not part
// of it: framing covers unconditional writes too (Backend.FramedBodies), and
// under HoldBack it is only how the final byte is held.
type Mode struct {
	Kind Kind
	// Checks are the conditions a leased write still sends the store,
	// which evaluates them right itself (storechecks.go). Zero: none.
	Checks StoreChecks
	// EmulateCopy: a CopyObject with destination conditions is built from
	// the store's conditional PutObject (small source) or
	// CompleteMultipartUpload (large source), whose atomic check makes it
	// atomic without a lease (proxy/emulatedcopy.go). For a store that
	// ignores or races a copy's conditions but is native for those two,
	// and only where no write of the store relies on its lease alone (a
	// leased write's check cannot see a copy that takes no lease);
	// internal/app sets it (copyemulation.go).
	EmulateCopy bool
	// SkipRecordedETags: strict mode's lease rows record no key state for
	// this store (backend.skip_recorded_etags), as on one served LeaseFirst.
	SkipRecordedETags bool
	// Rules, under Native, say how each conditional operation is made
	// atomic by the store's own checks (rules.go). Nil: every one native.
	Rules Rules
}

// RecordsKeyStates reports whether strict mode's lease rows may record and
// vouch for a key's state on this store (recorded.go). A record trusts the
// store's acknowledgement: the state it answered is what the next read
// sees. A store served LeaseFirst shows uploads before their last byte and
// (s3rver) answers a PutObject before its file is written, so it records
// none; nor does one configured so.
func (m Mode) RecordsKeyStates() bool { return m.Kind == HoldBack && !m.SkipRecordedETags }

// Leases reports whether writes in this mode take leases.
func (m Mode) Leases() bool { return m.Kind != Native }
