package dynamolease

import "context"

var _ BatchTable = (*MemTable)(nil)

// memBatch is how many rows MemTable takes in one call: a DeleteObjects'
// worth, as the embedded store does.
const memBatch = 1000

// MaxBatch implements BatchTable.
func (m *MemTable) MaxBatch() int { return memBatch }

// CreateInOrder implements BatchTable, under one lock.
func (m *MemTable) CreateInOrder(ctx context.Context, rs []Record) (int, *Record, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range rs {
		k := localKey{r.Path, r.ETag}
		if existing, ok := m.rows[k]; ok {
			return i, &existing, nil
		}
		m.rows[k] = Normalise(r)
	}
	return len(rs), nil, nil
}

// ReplaceEach implements BatchTable, under one lock.
func (m *MemTable) ReplaceEach(ctx context.Context, rs []Record, seen []uint64) ([]bool, []*Record, error) {
	if err := ctx.Err(); err != nil {
		return make([]bool, len(rs)), make([]*Record, len(rs)), err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	written, current := make([]bool, len(rs)), make([]*Record, len(rs))
	for i, r := range rs {
		k := localKey{r.Path, r.ETag}
		row, ok := m.rows[k]
		switch {
		case !ok:
		case row.Generation != seen[i]:
			current[i] = &row
		default:
			m.rows[k] = Normalise(r)
			written[i] = true
		}
	}
	return written, current, nil
}
