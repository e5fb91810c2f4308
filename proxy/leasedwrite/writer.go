package leasedwrite

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// DefaultMinStoreThroughput is the rate, in bytes per second, at which the
// store is assumed to copy at least (lease.min_store_mib_per_second).
const DefaultMinStoreThroughput = 16 << 20

// defaultDetachedWriteLimit bounds how long a leased write may run on at
// the backend after its client hung up (a CopyObject of 5 GiB or a
// CompleteMultipartUpload of many parts can take minutes). A write still
// running then is cancelled, its outcome unknown, its leases left to expire.
const defaultDetachedWriteLimit = 15 * time.Minute

// Options configure a Writer.
type Options struct {
	// Leases serialises the writes. Required.
	Leases *dynamolease.Committer
	// LeaseTimeout is the lease timeout Leases uses (SPEC §3: final bytes
	// are sent only while half of it remains). Default 20 s.
	LeaseTimeout time.Duration
	// MinStoreThroughput is the rate, in bytes per second, at which the
	// store is assumed to copy at least: a leased CopyObject or
	// CompleteMultipartUpload holds its lease for LeaseTimeout plus its
	// bytes at this rate (size.go). Default DefaultMinStoreThroughput.
	MinStoreThroughput float64
	// DetachedWriteLimit bounds a leased write whose client left
	// (guard.go). Default 15 minutes.
	DetachedWriteLimit time.Duration
	Log                zerolog.Logger
	// Observer is told about leased writes whose client left or whose
	// outcome is unknown. Nil: nobody.
	Observer LeasedWriteObserver
}

// Writer runs the leased writes of one s3cond. Build it with New.
type Writer struct {
	leases             *dynamolease.Committer
	leaseTimeout       time.Duration
	minStoreThroughput float64
	detachedWriteLimit time.Duration
	log                zerolog.Logger
	observer           LeasedWriteObserver
	// releases tracks lease releases still running after their write
	// ended (releases.go).
	releases releaseTracker
	// partsUnlistedLogged: a store without ListParts is logged once, not
	// at every completion (size.go).
	partsUnlistedLogged atomic.Bool
}

// New builds a Writer.
func New(o Options) *Writer {
	w := &Writer{
		leases: o.Leases, leaseTimeout: o.LeaseTimeout, minStoreThroughput: o.MinStoreThroughput,
		detachedWriteLimit: o.DetachedWriteLimit, log: o.Log, observer: o.Observer,
	}
	if w.leaseTimeout == 0 {
		w.leaseTimeout = 20 * time.Second
	}
	if w.minStoreThroughput <= 0 {
		w.minStoreThroughput = DefaultMinStoreThroughput
	}
	if w.detachedWriteLimit <= 0 {
		w.detachedWriteLimit = defaultDetachedWriteLimit
	}
	return w
}
