package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// leaseAge is how long ago the row was last written (acquired, renewed or
// released), read off its TTL (lastWriteAge), rounded to the second. It is
// off by the writer's clock, the TTL's whole seconds and any writer whose
// lease.ttl differs (arrow-rs); ok is false when the row has no TTL.
func leaseAge(r dynamolease.Record, view leaseView, now time.Time) (age time.Duration, ok bool) {
	age, ok = lastWriteAge(r, view, now)
	return age.Round(time.Second), ok
}

// leaseLeft is how long the holder of a held row has left by its own
// deadline (its last write plus the row's timeout), never negative.
func leaseLeft(r dynamolease.Record, age time.Duration) time.Duration {
	return max(r.Timeout-age, 0).Round(time.Second)
}

func leaseState(r dynamolease.Record) string {
	switch {
	case r.Released:
		return "released"
	case r.Unreadable != "":
		return "held (unreadable)"
	}
	return "held"
}

// printLeaseTable prints one line per row.
func printLeaseTable(w io.Writer, view leaseView, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tETAG\tGENERATION\tOWNER\tAGE\tSTATE\tLEFT")
	for _, r := range view.rows {
		age, left := "?", "-"
		if a, ok := leaseAge(r, view, now); ok {
			age = a.String()
			if !r.Released {
				left = leaseLeft(r, a).String()
			}
		}
		owner := r.Owner
		if owner == "" {
			owner = "-" // arrow-rs writes none
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", printable(r.Path), printable(r.ETag), r.Generation, printable(owner), age, leaseState(r), left)
	}
	return tw.Flush()
}

// printLeaseDetails prints every field of each row, one per line.
func printLeaseDetails(w io.Writer, view leaseView, now time.Time) {
	for i, r := range view.rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "path        %s\netag        %s\ngeneration  %d\nowner       %s\nstate       %s\ntimeout     %s\n",
			printable(r.Path), printable(r.ETag), r.Generation, printable(r.Owner), leaseState(r), r.Timeout)
		if r.Unreadable != "" {
			fmt.Fprintf(w, "unreadable  %s\n", printable(r.Unreadable))
		}
		if r.TTL.IsZero() {
			fmt.Fprintln(w, "ttl         none (the row never expires by itself)")
			continue
		}
		fmt.Fprintf(w, "ttl         %s\n", r.TTL.UTC().Format(time.RFC3339))
		age, ok := leaseAge(r, view, now)
		if !ok {
			continue
		}
		fmt.Fprintf(w, "age         %s (since its last write: its ttl minus lease.ttl %s)\n", age, view.leaseTTL)
		if r.Released {
			continue
		}
		takeover := time.Duration(float64(r.Timeout) * view.skewRate)
		fmt.Fprintf(w, "left        %s by the holder's own deadline; a contender takes it over %s (timeout × max_clock_skew_rate) after first seeing this generation\n",
			leaseLeft(r, age), takeover)
	}
}

// leaseJSON is a row as `--json` prints it.
type leaseJSON struct {
	Path       string     `json:"path"`
	ETag       string     `json:"etag"`
	Generation uint64     `json:"generation"`
	Owner      string     `json:"owner"`
	Released   bool       `json:"released"`
	TimeoutMS  int64      `json:"timeout_ms"`
	TTL        *time.Time `json:"ttl"`
	AgeSeconds *int64     `json:"age_seconds"`
	LeftSecs   *int64     `json:"left_seconds"`
	Unreadable string     `json:"unreadable,omitempty"`
}

func printLeaseJSON(w io.Writer, view leaseView, now time.Time) error {
	out := make([]leaseJSON, 0, len(view.rows))
	for _, r := range view.rows {
		j := leaseJSON{Path: r.Path, ETag: r.ETag, Generation: r.Generation, Owner: r.Owner, Released: r.Released,
			TimeoutMS: r.Timeout.Milliseconds(), Unreadable: r.Unreadable}
		if !r.TTL.IsZero() {
			ttl := r.TTL.UTC()
			j.TTL = &ttl
		}
		if age, ok := leaseAge(r, view, now); ok {
			secs := int64(age / time.Second)
			j.AgeSeconds = &secs
			if !r.Released {
				left := int64(leaseLeft(r, age) / time.Second)
				j.LeftSecs = &left
			}
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// printable quotes a value with control characters or spaces, which keys
// and owners may hold, so one row stays one line and columns stay apart.
func printable(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Sprintf("%q", s)
	}
	return s
}
