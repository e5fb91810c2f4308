// Package rowcodec reads the numbers of a stored lease row, whoever wrote
// it, within bounds: the DynamoDB, bolt and etcd stores decode their rows
// with it, and bolt and etcd rows share its JSON object.
package rowcodec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
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
const maxRowTimeout = dynamolease.MaxSizedTimeout

// Generations at or above MaxGeneration are not believed: a takeover
// writes generation+1, which must stay far from overflowing.
const MaxGeneration uint64 = 1 << 63

// UnreadableGeneration is the generation a row reads with when its own is
// missing, not a number, or not believed. A takeover of such a row is
// conditional on the row being exactly as it was read (each Table's
// Replace), and writes UnreadableGeneration+1, a readable generation.
const UnreadableGeneration uint64 = 1 << 62

// Problems collects what was wrong with a row as it is decoded.
type Problems []string

// Add records one thing wrong with the row.
func (p *Problems) Add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// String is the problems in one line, for Record.Unreadable; empty for none.
func (p Problems) String() string { return strings.Join(p, "; ") }

// Generation bounds a decoded generation.
func Generation(g uint64, problems *Problems) uint64 {
	if g >= MaxGeneration {
		problems.Add("generation %d is beyond %d", g, MaxGeneration-1)
		return UnreadableGeneration
	}
	return g
}

// ParseGeneration reads a generation written as decimal text.
func ParseGeneration(text string, problems *Problems) uint64 {
	g, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	if err != nil {
		problems.Add("generation %q is not a whole number", text)
		return UnreadableGeneration
	}
	return Generation(g, problems)
}

// Timeout turns a stored timeout in milliseconds into a duration; zero
// (the reader's own timeout applies) when it is not believable.
func Timeout(ms int64, problems *Problems) time.Duration {
	if ms < 0 || ms > maxRowTimeout.Milliseconds() {
		problems.Add("timeout %d ms is outside 0..%d ms", ms, maxRowTimeout.Milliseconds())
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// ParseTimeout reads a timeout in milliseconds written as decimal text.
func ParseTimeout(text string, problems *Problems) time.Duration {
	ms, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		problems.Add("timeout %q is not a whole number of milliseconds", text)
		return 0
	}
	return Timeout(ms, problems)
}

// TTL turns stored epoch seconds into a time; zero (the row never
// expires by itself) for 0 or an epoch too far out for time.Time.
func TTL(epoch int64, problems *Problems) time.Time {
	const maxEpoch = 1 << 40 // about 35 000 years
	switch {
	case epoch == 0:
		return time.Time{}
	case epoch < 0 || epoch > maxEpoch:
		problems.Add("ttl %d is not an epoch second", epoch)
		return time.Time{}
	}
	return time.Unix(epoch, 0)
}

// jsonFields are the fields of a bolt or etcd row's JSON object; each is
// decoded on its own, so one bad field spoils only itself.
type jsonFields struct {
	Generation json.RawMessage `json:"generation"`
	Timeout    json.RawMessage `json:"timeout"`
	TTL        json.RawMessage `json:"ttl"`
	Owner      json.RawMessage `json:"owner"`
	Released   json.RawMessage `json:"released"`
	KeyState   json.RawMessage `json:"key_state"`
	Receipt    json.RawMessage `json:"receipt"`
}

// DecodeJSON fills r's timeout, TTL, owner, released flag and key state from a
// row's JSON object, and its generation too when withGeneration (bolt rows
// carry it in the JSON; etcd rows on a line before it).
func DecodeJSON(body []byte, r *dynamolease.Record, withGeneration bool, problems *Problems) {
	var f jsonFields
	if err := json.Unmarshal(body, &f); err != nil {
		problems.Add("not a JSON object: %v", err)
		if withGeneration {
			r.Generation = UnreadableGeneration
		}
		return
	}
	if withGeneration {
		r.Generation = UnreadableGeneration
		var g uint64
		if len(f.Generation) == 0 {
			problems.Add("no generation")
		} else if err := json.Unmarshal(f.Generation, &g); err != nil {
			problems.Add("generation %s is not a whole number", f.Generation)
		} else {
			r.Generation = Generation(g, problems)
		}
	}
	var ms int64
	if len(f.Timeout) == 0 {
		problems.Add("no timeout")
	} else if err := json.Unmarshal(f.Timeout, &ms); err != nil {
		problems.Add("timeout %s is not a whole number of milliseconds", f.Timeout)
	} else {
		r.Timeout = Timeout(ms, problems)
	}
	var epoch int64
	if len(f.TTL) > 0 && json.Unmarshal(f.TTL, &epoch) != nil {
		problems.Add("ttl %s is not an epoch second", f.TTL)
	} else {
		r.TTL = TTL(epoch, problems)
	}
	if len(f.Owner) > 0 && json.Unmarshal(f.Owner, &r.Owner) != nil {
		problems.Add("owner %s is not a string", f.Owner)
	}
	if len(f.Released) > 0 && json.Unmarshal(f.Released, &r.Released) != nil {
		// Read as unreleased: a holder's lease is waited out, never cut short.
		problems.Add("released %s is not a boolean", f.Released)
		r.Released = false
	}
	r.KeyState = KeyState(f.KeyState)
	r.Receipt = Receipt(f.Receipt)
}

// KeyState reads a row's recorded key state; nil for none, or for one it
// cannot read (the reader then reads the store: dynamolease/keystate.go).
func KeyState(raw json.RawMessage) *dynamolease.KeyState {
	var text string
	if len(raw) == 0 || json.Unmarshal(raw, &text) != nil {
		return nil
	}
	return dynamolease.DecodeKeyState(text)
}

// EncodeKeyState is a record's key state as a row's JSON carries it:
// empty (omitted) for none.
func EncodeKeyState(s *dynamolease.KeyState) string {
	if s == nil {
		return ""
	}
	return dynamolease.EncodeKeyState(*s)
}
