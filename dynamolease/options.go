package dynamolease

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
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
	Owner            string        // written to each row, for people reading the table; default host:pid:random
}

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
	if o.Owner == "" {
		o.Owner = DefaultOwner()
	}
	return o
}

// DefaultOwner names this process: host:pid:random.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), randomToken(4))
}

func randomToken(bytes int) string {
	b := make([]byte, bytes)
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
	return time.Duration(float64(rowTimeout) * o.MaxClockSkewRate)
}
