package precondition

// LeaseETagUnread is LeaseETag before any state is read, where the
// condition alone names the lease: "*" for If-None-Match: *, the tag for
// If-Match with a single tag (Evaluate passes only on that version, whose
// canonical ETag is the tag). If-Match: *, tag lists and a delete's size or
// time conditions lease whatever version is current, so they need the state
// first (false).
func (c Conditions) LeaseETagUnread() (string, bool) {
	switch {
	case c.deleteIf.active():
		return "", false
	case c.kind == kindCreate:
		return wildcard, true
	case c.kind == kindMatchTag && len(c.etags) == 1:
		return c.etags[0], true
	}
	return "", false
}
