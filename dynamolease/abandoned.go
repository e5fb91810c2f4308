package dynamolease

import (
	"context"
	"errors"
	"sync"
	"time"
)

// maxAbandonedRows bounds how many rows a Committer remembers to settle; a
// longer outage leaves the rest to expire after timeout × MaxClockSkewRate.
const maxAbandonedRows = 1024

// maxSettleInterval bounds the back-off between two looks at one row.
const maxSettleInterval = 2 * time.Second

// abandonedRows settles lease rows whose write had an unknown outcome.
//
// A Create or takeover that fails with a table error (a timeout, a
// connection broken after the request went out, the caller hanging up) may
// still land: etcd applies a proposal that outlived its client's deadline
// once the cluster is back; DynamoDB may have applied a request whose answer
// was lost. Acquire has returned an error by then, so no write is made under
// that lease, but every contender would wait timeout × MaxClockSkewRate for
// it. So the Committer remembers each such row and, once the table answers
// again, marks it released if it is exactly the row it tried to write: an
// Acquire's owner is unique, so nobody else writes that row, and releasing
// a lease nobody uses is what Release does anyway. Renewals are not
// settled: their holder still holds the lease.
//
// A row that is not there yet may still come: a request can wait in a
// frozen member's socket and be applied when it wakes. So an absent row is
// looked at again, less and less often, until the row has moved past where
// the write could land or until timeout × MaxClockSkewRate has passed
// (a contender then takes it over anyway, if it landed by then).
type abandonedRows struct {
	c       *Committer
	mu      sync.Mutex
	pending map[abandonedKey]abandonedRow
	running bool
}

type abandonedKey struct {
	row   localKey
	owner string
}

type abandonedRow struct {
	record   Record
	giveUp   time.Time     // stop looking then
	due      time.Time     // next look
	interval time.Duration // back-off between looks
}

func newAbandonedRows(c *Committer) *abandonedRows {
	return &abandonedRows{c: c, pending: map[abandonedKey]abandonedRow{}}
}

// add remembers r, the row a failed write may have left.
func (a *abandonedRows) add(r Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) >= maxAbandonedRows {
		return
	}
	now := time.Now()
	a.pending[abandonedKey{localKey{r.Path, r.ETag}, r.Owner}] = abandonedRow{record: r,
		giveUp: now.Add(a.c.opts.staleAfter(r.Timeout)), due: now, interval: a.c.opts.PollInterval}
	if !a.running {
		a.running = true
		go a.run()
	}
}

// run settles the pending rows, one pass per poll interval, until none is
// left.
func (a *abandonedRows) run() {
	for {
		time.Sleep(a.c.opts.PollInterval)
		batch, more := a.next()
		if !more {
			return
		}
		for key, row := range batch {
			if time.Now().Before(row.due) {
				continue
			}
			settled, err := a.settle(row.record)
			now := time.Now()
			if settled || now.After(row.giveUp) {
				a.forget(key)
				continue
			}
			if err != nil {
				break // the table still fails: try again next pass
			}
			row.interval = min(2*row.interval, maxSettleInterval)
			row.due = now.Add(row.interval)
			a.update(key, row)
		}
	}
}

// next returns a copy of the pending rows, or false (and stops the loop)
// when there are none.
func (a *abandonedRows) next() (map[abandonedKey]abandonedRow, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) == 0 {
		a.running = false
		return nil, false
	}
	batch := make(map[abandonedKey]abandonedRow, len(a.pending))
	for k, v := range a.pending {
		batch[k] = v
	}
	return batch, true
}

func (a *abandonedRows) update(key abandonedKey, row abandonedRow) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pending[key]; ok {
		a.pending[key] = row
	}
}

func (a *abandonedRows) forget(key abandonedKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pending, key)
}

// settle marks r released if the table holds exactly r; true when there is
// nothing left to do: r was released, or the row is one r can no longer
// land on. A create needs an absent row and a takeover to generation g a
// row at g-1, so only a row at r's generation - 1 may still take r (a
// create's generation is random: no row sits just below it).
func (a *abandonedRows) settle(r Record) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.c.opts.Timeout)
	defer cancel()
	row, err := a.c.table.Get(ctx, r.Path, r.ETag)
	if err != nil {
		return false, err
	}
	if row == nil {
		return false, nil // not landed, yet
	}
	if !wroteIt(row, r) {
		return row.Generation+1 != r.Generation, nil
	}
	released := r
	released.Fence = nil // our own row now: its generation is ours
	released.Released = true
	released.TTL = time.Now().Add(a.c.opts.TTL)
	if _, err := a.c.table.Replace(ctx, released, r.Generation); err != nil && !errors.Is(err, ErrConditionFailed) {
		return false, err
	}
	a.c.log.Info().Str("path", r.Path).Str("etag", r.ETag).Uint64("generation", r.Generation).
		Msg("released a lease row that a failed lease write left behind")
	return true, nil
}
