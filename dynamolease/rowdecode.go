package dynamolease

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A lease row is written by s3cond, by arrow-rs, or by hand. A row whose
// numbers cannot be read as written (no timeout, a text generation, a
// timeout of 9e15 ms) must neither lock its key as "store unavailable"
// until someone fixes it nor be taken over at once: it is read as held, for
// the reader's own lease timeout × skew, and then taken over like a holder
// that vanished. Record.Unreadable says what was wrong, for the log. Every
// number a row carries is bounded here, so no arithmetic on it overflows.

// maxRowTimeout is the longest lease timeout a row is believed to carry. A
// longer one (far beyond any write s3cond guards) is read as unreadable.
const maxRowTimeout = 24 * time.Hour

// Generations at or above maxRowGeneration are not believed: a takeover
// writes generation+1, which must stay far from overflowing.
const maxRowGeneration uint64 = 1 << 63

// unreadableGeneration is the generation a row reads with when its own is
// missing, not a number, or not believed. A takeover of such a row is
// conditional on the row being exactly as it was read (each Table's
// Replace), and writes unreadableGeneration+1, a readable generation.
const unreadableGeneration uint64 = 1 << 62

// rowProblems collects what was wrong with a row as it is decoded.
type rowProblems []string

func (p *rowProblems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p rowProblems) String() string { return strings.Join(p, "; ") }

// rowGeneration bounds a decoded generation.
func rowGeneration(g uint64, problems *rowProblems) uint64 {
	if g >= maxRowGeneration {
		problems.add("generation %d is beyond %d", g, maxRowGeneration-1)
		return unreadableGeneration
	}
	return g
}

// parseRowGeneration reads a generation written as decimal text.
func parseRowGeneration(text string, problems *rowProblems) uint64 {
	g, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	if err != nil {
		problems.add("generation %q is not a whole number", text)
		return unreadableGeneration
	}
	return rowGeneration(g, problems)
}

// rowTimeout turns a stored timeout in milliseconds into a duration; zero
// (the reader's own timeout applies) when it is not believable.
func rowTimeout(ms int64, problems *rowProblems) time.Duration {
	if ms < 0 || ms > maxRowTimeout.Milliseconds() {
		problems.add("timeout %d ms is outside 0..%d ms", ms, maxRowTimeout.Milliseconds())
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// parseRowTimeout reads a timeout in milliseconds written as decimal text.
func parseRowTimeout(text string, problems *rowProblems) time.Duration {
	ms, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		problems.add("timeout %q is not a whole number of milliseconds", text)
		return 0
	}
	return rowTimeout(ms, problems)
}

// rowTTL turns stored epoch seconds into a time; zero (the row never
// expires by itself) for 0 or an epoch too far out for time.Time.
func rowTTL(epoch int64, problems *rowProblems) time.Time {
	const maxEpoch = 1 << 40 // about 35 000 years
	switch {
	case epoch == 0:
		return time.Time{}
	case epoch < 0 || epoch > maxEpoch:
		problems.add("ttl %d is not an epoch second", epoch)
		return time.Time{}
	}
	return time.Unix(epoch, 0)
}

// jsonRowFields are the fields of a bolt or etcd row's JSON object; each is
// decoded on its own, so one bad field spoils only itself.
type jsonRowFields struct {
	Generation json.RawMessage `json:"generation"`
	Timeout    json.RawMessage `json:"timeout"`
	TTL        json.RawMessage `json:"ttl"`
	Owner      json.RawMessage `json:"owner"`
	Released   json.RawMessage `json:"released"`
}

// decodeJSONRow fills r's timeout, TTL, owner and released flag from a
// row's JSON object, and its generation too when withGeneration (bolt rows
// carry it in the JSON; etcd rows on a line before it).
func decodeJSONRow(body []byte, r *Record, withGeneration bool, problems *rowProblems) {
	var f jsonRowFields
	if err := json.Unmarshal(body, &f); err != nil {
		problems.add("not a JSON object: %v", err)
		if withGeneration {
			r.Generation = unreadableGeneration
		}
		return
	}
	if withGeneration {
		r.Generation = unreadableGeneration
		var g uint64
		if len(f.Generation) == 0 {
			problems.add("no generation")
		} else if err := json.Unmarshal(f.Generation, &g); err != nil {
			problems.add("generation %s is not a whole number", f.Generation)
		} else {
			r.Generation = rowGeneration(g, problems)
		}
	}
	var ms int64
	if len(f.Timeout) == 0 {
		problems.add("no timeout")
	} else if err := json.Unmarshal(f.Timeout, &ms); err != nil {
		problems.add("timeout %s is not a whole number of milliseconds", f.Timeout)
	} else {
		r.Timeout = rowTimeout(ms, problems)
	}
	var epoch int64
	if len(f.TTL) > 0 && json.Unmarshal(f.TTL, &epoch) != nil {
		problems.add("ttl %s is not an epoch second", f.TTL)
	} else {
		r.TTL = rowTTL(epoch, problems)
	}
	if len(f.Owner) > 0 && json.Unmarshal(f.Owner, &r.Owner) != nil {
		problems.add("owner %s is not a string", f.Owner)
	}
	if len(f.Released) > 0 && json.Unmarshal(f.Released, &r.Released) != nil {
		// Read as unreleased: a holder's lease is waited out, never cut short.
		problems.add("released %s is not a boolean", f.Released)
		r.Released = false
	}
}
