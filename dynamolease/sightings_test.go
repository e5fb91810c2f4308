package dynamolease

import (
	"fmt"
	"testing"
	"time"
)

func TestSightingsCountFromTheFirstSightingOfAVersion(t *testing.T) {
	s := newSightings(10)
	k := localKey{"b/k", "*"}
	t0 := time.Now()
	row := &Record{Generation: 3, Owner: "a", TTL: t0.Add(time.Hour), Timeout: time.Second}
	if got := s.firstSeen(k, row, t0, time.Minute); !got.Equal(t0) {
		t.Fatalf("first sighting = %v, want %v", got, t0)
	}
	if got := s.firstSeen(k, row, t0.Add(30*time.Second), time.Minute); !got.Equal(t0) {
		t.Fatalf("same version seen again: first sighting %v, want %v", got, t0)
	}
	// Any write of the row is a new version: a renewal (generation), a row
	// removed and written anew (owner, TTL).
	for name, changed := range map[string]Record{
		"generation": {Generation: 4, Owner: "a", TTL: row.TTL, Timeout: time.Second},
		"owner":      {Generation: 3, Owner: "b", TTL: row.TTL, Timeout: time.Second},
		"ttl":        {Generation: 3, Owner: "a", TTL: row.TTL.Add(time.Second), Timeout: time.Second},
	} {
		later := t0.Add(40 * time.Second)
		s.firstSeen(k, row, t0, time.Minute)
		if got := s.firstSeen(k, &changed, later, time.Minute); !got.Equal(later) {
			t.Fatalf("%s changed: first sighting %v, want %v", name, got, later)
		}
		s.forget(k)
	}
}

func TestSightingsAreBounded(t *testing.T) {
	s := newSightings(3)
	t0 := time.Now()
	for i := range 5 {
		row := &Record{Generation: 1, Owner: "o", Timeout: time.Second}
		s.firstSeen(localKey{fmt.Sprintf("b/%d", i), "*"}, row, t0.Add(time.Duration(i)*time.Millisecond), time.Minute)
	}
	if n := s.len(); n != 3 {
		t.Fatalf("%d rows remembered, want the bound 3", n)
	}
	// The most recent ones stayed.
	row := &Record{Generation: 1, Owner: "o", Timeout: time.Second}
	if got := s.firstSeen(localKey{"b/4", "*"}, row, t0.Add(time.Second), time.Minute); !got.Equal(t0.Add(4 * time.Millisecond)) {
		t.Fatalf("the newest row was forgotten")
	}
}

func TestSightingsForgetRowsNobodyAsksFor(t *testing.T) {
	s := newSightings(100)
	t0 := time.Now()
	row := &Record{Generation: 1, Owner: "o", Timeout: time.Second}
	s.firstSeen(localKey{"b/old", "*"}, row, t0, time.Minute)
	// Two takeover waits later, the next new row sweeps the old one away.
	s.firstSeen(localKey{"b/new", "*"}, row, t0.Add(2*time.Minute+sweepInterval), time.Minute)
	if n := s.len(); n != 1 {
		t.Fatalf("%d rows remembered, want 1: the row nobody asked for is forgotten", n)
	}
}
