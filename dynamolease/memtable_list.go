package dynamolease

import (
	"context"
	"strings"
)

// List implements Lister.
func (m *MemTable) List(ctx context.Context, prefix string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var rows []Record
	for k, r := range m.rows {
		if strings.HasPrefix(k.path, prefix) {
			rows = append(rows, r)
		}
	}
	SortRecords(rows)
	return rows, nil
}
