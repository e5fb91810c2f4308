package dynamolease

// TookOverHeld reports whether this lease took its row over from a holder
// that never released it: one that vanished, or overran its lease. Only
// such a holder can have left work of its own half done on the key (a
// RenameObject between its copy and its delete, SPEC §3 "RenameObject"),
// so only such a taker needs to look for it: every other acquisition
// skips that read.
func (l *Lease) TookOverHeld() bool { return l.tookOverHeld }
