package precondition

import "testing"

func TestAnyStateAlwaysHolds(t *testing.T) {
	for _, s := range []ObjectState{missing, current, multi} {
		if err := (AnyState{}).Evaluate(s); err != nil {
			t.Errorf("Evaluate(%+v) = %v, want nil", s, err)
		}
	}
}

func TestAnyStateLeasesTheVersionItReplaces(t *testing.T) {
	if got := (AnyState{}).LeaseETag(missing); got != "*" {
		t.Errorf("LeaseETag(missing) = %q, want *", got)
	}
	unquoted := ObjectState{Exists: true, ETag: "9b2cf535f27731c974343645a3985328"}
	want := CanonicalETag(current.ETag)
	for _, s := range []ObjectState{current, unquoted} {
		if got := (AnyState{}).LeaseETag(s); got != want {
			t.Errorf("LeaseETag(%q) = %q, want %q", s.ETag, got, want)
		}
	}
}

func TestAnyStateCoversOnlyTheLeasedVersion(t *testing.T) {
	leased := (AnyState{}).LeaseETag(current)
	cases := []struct {
		name   string
		lease  string
		state  ObjectState
		covers bool
	}{
		{"create lease, still absent", "*", missing, true},
		{"create lease, object appeared", "*", current, false},
		{"version lease, same version", leased, current, true},
		{"version lease, replaced", leased, multi, false},
		{"version lease, deleted", leased, missing, false},
	}
	for _, c := range cases {
		if got := (AnyState{}).Covers(c.lease, c.state); got != c.covers {
			t.Errorf("%s: Covers = %v, want %v", c.name, got, c.covers)
		}
	}
}

// AnyState and Conditions agree on the lease key of a version both would
// replace, so a strict-mode writer contends with an If-Match writer.
func TestAnyStateLeasesWhatIfMatchLeases(t *testing.T) {
	conds, err := ParseWrite(header("If-Match", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if a, c := (AnyState{}).LeaseETag(current), conds.LeaseETag(current); a != c {
		t.Errorf("AnyState leases %q, If-Match: * leases %q", a, c)
	}
}
