package proxy

import "testing"

// Once switched, requests see the leased view, and that view still counts
// as its backend where a request's backend is compared with a bucket's (a
// copy source, a listing, a configuration body), and as no other.
func TestLeasedViewServesAsItsBackend(t *testing.T) {
	b := &Backend{Name: "a", NativeConditional: true, Switch: &LeaseSwitch{}}
	other := &Backend{Name: "b", NativeConditional: true, Switch: &LeaseSwitch{}}
	if b.serving() != b || b.Switch.Switched() {
		t.Fatal("an unswitched backend serves as something else")
	}
	leased := *b
	leased.NativeConditional = false
	b.Switch.SwitchToLease(&leased)
	view := b.serving()
	switch {
	case !b.Switch.Switched():
		t.Error("the switch does not say it was thrown")
	case view.NativeConditional:
		t.Error("the switched backend still serves natively")
	case !view.sameBackend(b):
		t.Error("the leased view is not its own backend")
	case view.sameBackend(other) || other.serving().sameBackend(b):
		t.Error("the leased view passes for another backend")
	}
	unswitched := &Backend{Name: "c"}
	if !unswitched.sameBackend(unswitched) || unswitched.sameBackend(&Backend{Name: "c"}) {
		t.Error("a backend without a switch compares other than by identity")
	}
}
