package sigv4

import (
	"strings"
	"sync/atomic"
	"time"
)

// amzDateCache remembers the last X-Amz-Date a Verifier parsed. Every
// request signed within the same second carries the same value, and
// time.Parse was about 2 % of s3cond's CPU per 4 KiB GET
// (docs/performance-notes.md, issue 35 item 7); the cache turns it into a
// string comparison. Only a value that parsed is remembered, so a malformed
// one is refused every time.
type amzDateCache struct {
	last atomic.Pointer[parsedAmzDate]
}

type parsedAmzDate struct {
	raw  string
	when time.Time
}

// parse is time.Parse(amzDateLayout, raw), remembered.
func (c *amzDateCache) parse(raw string) (time.Time, error) {
	if last := c.last.Load(); last != nil && last.raw == raw {
		return last.when, nil
	}
	when, err := time.Parse(amzDateLayout, raw)
	if err != nil {
		return time.Time{}, err
	}
	// A copy: the header value may share memory with a larger buffer.
	c.last.Store(&parsedAmzDate{raw: strings.Clone(raw), when: when})
	return when, nil
}

// appendScopeDay appends t's day in UTC as scopeDateLayout formats it, and
// appendAmzDate t in UTC as amzDateLayout does, digit by digit: time's
// layout interpreter was as costly as the parse (TestAmzDateFormatsAsTime).
func appendScopeDay(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, scopeDateLayout)
	}
	b = appendDigits(b, year, 4)
	b = appendDigits(b, int(month), 2)
	return appendDigits(b, day, 2)
}

func appendAmzDate(b []byte, t time.Time) []byte {
	t = t.UTC()
	if year := t.Year(); year < 0 || year > 9999 {
		return t.AppendFormat(b, amzDateLayout)
	}
	b = appendScopeDay(b, t)
	hour, minute, second := t.Clock()
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = appendDigits(b, minute, 2)
	b = appendDigits(b, second, 2)
	return append(b, 'Z')
}

// appendDigits appends the width lowest decimal digits of n (≥ 0).
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	for range width {
		b = append(b, 0)
	}
	for i := len(b) - 1; i >= start; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}
