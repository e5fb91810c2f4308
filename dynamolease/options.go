package dynamolease

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"time"
)

// Options tune a Committer. Zero fields take the defaults of SPEC §3.
type Options struct {
	Timeout          time.Duration // lease length; default 20 s
	MaxClockSkewRate float64       // how much faster any clock may run than another; default 3
	PollInterval     time.Duration // how often a waiter re-reads the row and re-checks; default 100 ms
	TTL              time.Duration // how long the table keeps a row after its last write; default 1 h
	WaitBudget       time.Duration // how long Acquire waits for another holder; default 10 s
	// SizedLeaseCap is the longest lease Extend writes
	// (lease.max_sized_timeout): every wait that stands for rows nobody can
	// read (a lease file discarded after a machine restart, a lost table)
	// must cover the longest lease that may exist, and a cap is the bound
	// that survives a crash (LongestTakeoverWait). Default
	// DefaultSizedLeaseCap, at least Timeout, at most MaxSizedTimeout.
	SizedLeaseCap time.Duration
	// Owner names the process on each row, for people reading the table;
	// default host:pid. The Committer appends a random token of its own
	// (processToken), so two processes never write one owner, whatever
	// this says: containers share hostnames and run s3cond as PID 1.
	Owner string
	// Observer hears of lease events, for metrics; default: nobody.
	Observer Observer
}

// Observer is told what leases do, so a process can export metrics without
// the protocol knowing about them. Its methods are called synchronously on
// the lease's own goroutines: they must be quick and safe for concurrent use.
type Observer interface {
	// AcquireDone reports the end of an Acquire call: how long it took
	// (mostly waiting for other holders) and its error, nil for a lease.
	AcquireDone(wait time.Duration, err error)
	// TookOver reports a row won by bumping its generation: released says
	// whether the holder had released it (the usual case once a key has
	// been written) rather than gone stale (a holder that vanished).
	TookOver(released bool)
	// Renewed reports a successful renewal.
	Renewed()
	// Lost reports a held lease found taken over, or expired unrenewed.
	Lost()
}

type nopObserver struct{}

func (nopObserver) AcquireDone(time.Duration, error) {}
func (nopObserver) TookOver(bool)                    {}
func (nopObserver) Renewed()                         {}
func (nopObserver) Lost()                            {}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	if o.MaxClockSkewRate < 1 {
		o.MaxClockSkewRate = 3
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 100 * time.Millisecond
	}
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.WaitBudget <= 0 {
		o.WaitBudget = 10 * time.Second
	}
	if o.SizedLeaseCap <= 0 {
		o.SizedLeaseCap = DefaultSizedLeaseCap
	}
	o.SizedLeaseCap = min(max(o.SizedLeaseCap, o.Timeout), MaxSizedTimeout)
	if o.Owner == "" {
		o.Owner = DefaultOwner()
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return o
}

// DefaultOwner names this process for people reading the table: host:pid.
// It is not unique (see Options.Owner): the Committer makes it so.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// processTokenBytes is the size of a Committer's random token: 128 bits, so
// no two Committers that ever run draw the same one.
const processTokenBytes = 16

// processToken is a Committer's own random token, drawn once per Committer
// (per process start): the part of every owner it writes that no other
// process, and no earlier or later run of this one, has.
func processToken() string {
	if unsafeOwnerWithoutToken {
		return ""
	}
	b := make([]byte, processTokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// staleAfter is how long a waiter must watch one generation of a row before
// it may take the row over.
func (o Options) staleAfter(rowTimeout time.Duration) time.Duration {
	if rowTimeout <= 0 {
		// A row without a usable timeout is treated as one of ours rather
		// than as instantly stale.
		rowTimeout = o.Timeout
	}
	return scaleDuration(rowTimeout, o.MaxClockSkewRate)
}

// LongestTakeoverWait is how long a waiter may have to watch an unreleased
// row of this fleet before it takes the row over: the longest lease a row
// may carry, max(Timeout, SizedLeaseCap), × MaxClockSkewRate, defaults
// filled in. A store that lost its rows waits as long before it grants
// leases again: a lost row may have been a sized lease (a copy the store
// still runs), not only one of Timeout.
func (o Options) LongestTakeoverWait() time.Duration {
	return o.LongestTakeoverWaitBeyond(0)
}

// LongestLease is the longest lease these options grant, sized ones
// included: max(Timeout, SizedLeaseCap), defaults filled in. A lease store
// records it before granting any (boltstore: the state file), so that a
// later wait for rows it lost covers it even under a lower cap.
func (o Options) LongestLease() time.Duration {
	o = o.withDefaults()
	return max(o.Timeout, o.SizedLeaseCap)
}

// LongestTakeoverWaitBeyond is LongestTakeoverWait covering also leases of
// length granted, the longest a lease store recorded granting (possibly
// under a higher cap, configured before a restart): max(Timeout,
// SizedLeaseCap, granted) × MaxClockSkewRate.
func (o Options) LongestTakeoverWaitBeyond(granted time.Duration) time.Duration {
	o = o.withDefaults()
	if unsafePlainLeaseWait {
		return o.staleAfter(o.Timeout)
	}
	return o.staleAfter(max(o.Timeout, o.SizedLeaseCap, min(granted, MaxSizedTimeout)))
}

// scaleDuration is d × rate, saturating instead of overflowing.
func scaleDuration(d time.Duration, rate float64) time.Duration {
	product := float64(d) * rate
	if product >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(product)
}
