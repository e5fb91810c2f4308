package leasedwrite

import (
	"context"
	"sort"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// deleteKey is one object of a leased DeleteObjects: every entry naming it
// (repeats, or names a normalizing key policy resolves to the same object)
// shares one lease.
type deleteKey struct {
	leasePath string
	target    operation.Target
	entries   []s3xml.ObjectIdentifier
	conds     *keyConditions
	read      deleteRead
	lease     *dynamolease.Lease
}

// DeleteSender sends a DeleteObjects' entries to the store. proxy
// implements it for a call.
type DeleteSender interface {
	// Delete sends entries (each once) under ctx and gives every entry its
	// answer in result; answered reports that the store's answer was read
	// in full, whatever it said.
	Delete(ctx context.Context, entries []s3xml.ObjectIdentifier, result *s3xml.DeleteResult) (answered bool, err error)
}

// DeleteObjects deletes entries of which at least one carries a condition
// (or all, in strict mode), under the rules of every other conditional write:
//   - each object is leased once, however many entries name it, in lease
//     path order (so two such requests cannot deadlock), the rows nobody
//     has many at a time (leaseDeleteKeys);
//   - waiting for keys someone else holds happens within one wait budget:
//     a key still held when it runs out answers 409, and the request never
//     holds its leases for longer waiting for more;
//   - held leases are renewed while the request runs, and the half-lease
//     rule applies before the backend delete (SPEC §3 step 5);
//   - once sent, the backend delete runs to its end whatever the client
//     does, and the leases are released only after its answer
//     (guard).
//
// Entries without a condition on objects no conditional entry names take no lease
// (outside strict mode) and are sent along. req.KeyTarget names each entry's object.
func (w *Writer) DeleteObjects(req Request, entries []s3xml.ObjectIdentifier, strict bool, result *s3xml.DeleteResult, sender DeleteSender) error {
	keys, unleased := deleteKeys(req, entries, strict)
	g := w.guardWrite(req)
	defer g.end()

	held, err := w.leaseDeleteKeys(req, g, keys, result)
	if err != nil {
		return err
	}
	send := unleased
	var sentUnder []*deleteKey
	for _, k := range held {
		if ok := k.judgeEntries(result); len(ok) > 0 {
			send = append(send, ok...)
			sentUnder = append(sentUnder, k)
		}
	}
	send = w.keepHalfLeases(req, sentUnder, send, result)
	if len(send) == 0 {
		return nil
	}
	if err := g.reach(); err != nil {
		return err
	}
	answered, err := sender.Delete(g.ctx, send, result)
	if answered {
		g.answer()
	}
	return err
}

// deleteKeys groups the entries by the object they delete, in lease path
// order; entries that need no lease come back apart.
func deleteKeys(req Request, entries []s3xml.ObjectIdentifier, strict bool) ([]*deleteKey, []s3xml.ObjectIdentifier) {
	byPath := map[string]*deleteKey{}
	needsLease := map[string]bool{}
	for _, o := range entries {
		t := req.KeyTarget(o.Key)
		path := req.LeasePath(t)
		k := byPath[path]
		if k == nil {
			k = &deleteKey{leasePath: path, target: t, conds: &keyConditions{}}
			byPath[path] = k
		}
		k.entries = append(k.entries, o)
		needsLease[path] = needsLease[path] || strict || o.Conditional()
	}
	var keys []*deleteKey
	var unleased []s3xml.ObjectIdentifier
	for path, k := range byPath {
		if !needsLease[path] {
			unleased = append(unleased, k.entries...)
			continue
		}
		for _, o := range k.entries {
			k.conds.members = append(k.conds.members, entryCondition(o))
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].leasePath < keys[j].leasePath })
	return keys, unleased
}

// entryCondition is one entry's condition: its ETag (If-Match), Size and
// LastModifiedTime, evaluated as DeleteObject's headers are; or, for an
// entry without any on a leased key, any state (it replaces whatever
// version is there, and contends with every writer of it).
func entryCondition(o s3xml.ObjectIdentifier) Condition {
	if !o.Conditional() {
		return precondition.AnyState{}
	}
	// serveDeleteObjects answered the entries whose values do not parse.
	conds, _ := precondition.ForDeleteEntry(o.ETag, o.Size, o.LastModifiedTime)
	return conds
}

// answerAll answers every entry of k with err; a precondition failure is
// judged entry by entry on the state that failed it.
func (k *deleteKey) answerAll(err error, result *s3xml.DeleteResult) {
	e := s3err.As(err)
	perEntry := k.conds.seen && (e.Code == s3err.PreconditionFailed || e.Code == s3err.NoSuchKey)
	for i, o := range k.entries {
		entryErr := err
		if perEntry {
			if own := k.conds.members[i].Evaluate(k.conds.last); own != nil {
				entryErr = own
			}
		}
		result.Errors = append(result.Errors, s3xml.EntryError(o, entryErr))
	}
}

// judgeEntries evaluates each entry of a leased key on the state its
// lease's re-check saw: those that hold are returned, without their
// conditions (s3cond enforced them); the others get their error.
func (k *deleteKey) judgeEntries(result *s3xml.DeleteResult) []s3xml.ObjectIdentifier {
	var ok []s3xml.ObjectIdentifier
	for i, o := range k.entries {
		if err := k.conds.members[i].Evaluate(k.conds.last); err != nil {
			result.Errors = append(result.Errors, s3xml.EntryError(o, err))
			continue
		}
		ok = append(ok, o.Unconditional())
	}
	return ok
}

// keepHalfLeases applies the half-lease rule to every lease guarding
// entries about to be sent: one that cannot be renewed in time takes its
// entries out of the delete, each answered with the failure. Entries of the
// key that judgeEntries already answered keep their one answer.
func (w *Writer) keepHalfLeases(req Request, keys []*deleteKey, send []s3xml.ObjectIdentifier, result *s3xml.DeleteResult) []s3xml.ObjectIdentifier {
	dropped := map[string]error{}
	for _, k := range keys {
		err := w.ensureHalfLease(req.Ctx, k.lease)
		select {
		case <-k.lease.Lost():
			err = s3err.Newf(s3err.ConditionalRequestConflict, "The lease on this key was lost before the delete was sent; retry.")
		default:
		}
		if err != nil {
			dropped[k.leasePath] = err
		}
	}
	if len(dropped) == 0 {
		return send
	}
	kept := send[:0:0]
	for _, o := range send {
		path := req.LeasePath(operation.Target{Bucket: req.Target.Bucket, Key: o.Key})
		if err, ok := dropped[path]; ok {
			result.Errors = append(result.Errors, s3xml.EntryError(o, err))
			continue
		}
		kept = append(kept, o)
	}
	return kept
}

// keyConditions is the condition of every entry naming one object: it holds
// when any entry's does, so the object is leased once for all of them, and
// it remembers the last state it was evaluated on (the re-check holding the
// lease, once acquired), on which each entry is then judged. Acquire calls
// it on one goroutine only.
type keyConditions struct {
	members []Condition
	last    precondition.ObjectState
	seen    bool
}

func (k *keyConditions) Evaluate(s precondition.ObjectState) error {
	k.last, k.seen = s, true
	var first error
	for _, m := range k.members {
		err := m.Evaluate(s)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// LeaseETag leases the version the entries would delete ("*" if none):
// every entry that holds on s names that one.
func (k *keyConditions) LeaseETag(s precondition.ObjectState) string {
	return precondition.AnyState{}.LeaseETag(s)
}

// Covers reports whether the lease still names the version found in s, as
// for any write that replaces whatever is there.
func (k *keyConditions) Covers(leaseETag string, s precondition.ObjectState) bool {
	return precondition.AnyState{}.Covers(leaseETag, s)
}

var _ Condition = (*keyConditions)(nil)
