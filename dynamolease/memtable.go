package dynamolease

import (
	"context"
	"sync"
	"time"
)

// MemTable is a Table in memory. It stands for DynamoDB with strongly
// consistent reads and conditional writes, for tests and single-process use
// where leases need not survive a restart. Like DynamoDB before its TTL sweep
// runs, it keeps rows past their TTL.
type MemTable struct {
	mu   sync.Mutex
	rows map[localKey]Record
}

// NewMemTable returns an empty table.
func NewMemTable() *MemTable { return &MemTable{rows: map[localKey]Record{}} }

// Create implements Table.
func (m *MemTable) Create(ctx context.Context, r Record) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := localKey{r.Path, r.ETag}
	if existing, ok := m.rows[k]; ok {
		return &existing, ErrConditionFailed
	}
	m.rows[k] = Normalise(r)
	return nil, nil
}

// Replace implements Table.
func (m *MemTable) Replace(ctx context.Context, r Record, seen uint64) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := localKey{r.Path, r.ETag}
	current, ok := m.rows[k]
	if !ok {
		return nil, ErrConditionFailed
	}
	if current.Generation != seen || !r.Fence.Matches(current) {
		return &current, ErrConditionFailed
	}
	m.rows[k] = Normalise(r)
	return nil, nil
}

// Get implements Table.
func (m *MemTable) Get(ctx context.Context, path, etag string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[localKey{path, etag}]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

// Sweep deletes the rows whose TTL passed before now, as DynamoDB's TTL
// sweep does at a time of its choosing, and returns how many it deleted.
func (m *MemTable) Sweep(now time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	swept := 0
	for k, r := range m.rows {
		if !r.TTL.IsZero() && r.TTL.Before(now) {
			delete(m.rows, k)
			swept++
		}
	}
	return swept
}

// CreateOrTakeVouched implements VouchedTaker.
func (m *MemTable) CreateOrTakeVouched(ctx context.Context, r Record) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := localKey{r.Path, r.ETag}
	current, ok := m.rows[k]
	if ok && !VouchesForItself(current) {
		return &current, ErrConditionFailed
	}
	m.rows[k] = Normalise(r)
	if !ok {
		return nil, nil
	}
	return &current, nil
}
