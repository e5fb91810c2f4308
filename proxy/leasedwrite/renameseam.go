package leasedwrite

import "time"

// What proxy's own leased calls (RenameObject) share with the writes of
// this package: one mapping of the lease store's failures to S3 answers,
// and one rule for how long a lease covering a store's copy must be.

// LeaseError is leaseError for proxy's own leased calls.
func LeaseError(err error) error { return leaseError(err) }

// LeaseLengthFor is the lease length for store work of work bytes (a
// copy), as a leased CopyObject's lease is sized (size.go).
func (w *Writer) LeaseLengthFor(work int64) time.Duration { return w.leaseLengthFor(work) }
