// Package leasestore opens the lease store a config's lease.store names. It
// is the one place that chooses among dynamolease's stores (the embedded
// bbolt file, memory, DynamoDB, etcd), for internal/app, which serves
// through the store, and for cmd/s3cond's one-shot commands (table create,
// leases), which read and release rows beside a running s3cond or without
// one. It is a package beside dynamolease rather than in it because the
// choice is made from s3cond's config: dynamolease and its stores are
// usable, and tested, without it. Only embedded.go and shared.go import
// the store packages.
package leasestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
)

// ProbeKey is the lease row /readyz and `table create` on etcd read. No
// write ever creates it: reading it proves the table answers without
// touching real leases.
const ProbeKey = "s3cond-readiness-probe/"

// MaxListedRows bounds a listing read by a one-shot command, from the store
// or through a running s3cond's admin listener: past it, the caller is told
// to narrow the prefix.
const MaxListedRows = 1_000_000

// ErrOnlyRunning is what an offline read or release returns when only the
// running s3cond holding the rows can reach them (lease.store memory, or an
// embedded lease file a running s3cond has open): go through its admin
// listener. The error's text says which.
var ErrOnlyRunning = errors.New("only the running s3cond can reach these lease rows")

// onlyRunning is ErrOnlyRunning with its reason as the whole message.
type onlyRunning struct{ why string }

func (e onlyRunning) Error() string        { return e.why }
func (e onlyRunning) Is(target error) bool { return target == ErrOnlyRunning }

// store is one kind of lease store, as Store uses it.
type store interface {
	// serve opens the table a serving s3cond leases through; what it opens
	// it adds to s's closers.
	serve(s *Store, opts dynamolease.Options, log zerolog.Logger) (dynamolease.Table, error)
	// list reads the rows under prefix without a running s3cond's help,
	// each call to the store reading at most pageRows rows.
	list(ctx context.Context, prefix string, pageRows int) ([]dynamolease.Record, error)
	// release is dynamolease.ReleaseRow without a running s3cond's help.
	release(ctx context.Context, path, etag string, generation uint64) (*dynamolease.Record, error)
	// create is `table create`: what there is to create, created, or the
	// store checked; it says what it did.
	create(ctx context.Context, log zerolog.Logger) (string, error)
	// exists reports whether the store's table exists.
	exists(ctx context.Context) (bool, error)
	// where names the rows' place for messages ("lease file /d/leases.db").
	where() string
}

// Store is the lease store of a config, opened: its client made, for a
// shared store; nothing yet for the embedded file, which Table opens to
// serve and List and Release open for a moment each. Close closes what was
// opened.
type Store struct {
	kind    store
	closers []func() error
	// pageRows is how many rows one call of List reads from the store.
	pageRows int
}

// Open opens the lease store cfg.Lease.Store names.
func Open(ctx context.Context, cfg *config.Config) (*Store, error) {
	s := &Store{pageRows: admin.MaxPageRows}
	switch cfg.Lease.Store {
	case config.LeaseStoreMemory:
		s.kind = memoryStore{}
	case config.LeaseStoreDynamoDB:
		kind, err := openDynamo(ctx, cfg)
		if err != nil {
			return nil, err
		}
		s.kind = kind
	case config.LeaseStoreEtcd:
		kind, err := openEtcd(cfg)
		if err != nil {
			return nil, err
		}
		s.kind = kind
		s.closers = append(s.closers, kind.client.Close)
	default:
		s.kind = embeddedStore{cfg: cfg}
	}
	return s, nil
}

// Table opens the table a serving s3cond leases through, with the
// committer's options: the embedded file is opened (and swept of expired
// rows until Close), a shared store's table is its client's.
func (s *Store) Table(opts dynamolease.Options, log zerolog.Logger) (dynamolease.Table, error) {
	return s.kind.serve(s, opts, log)
}

// List reads every row under prefix, sorted by path and etag, a page at a
// time as the admin listener's GET /leases does (no call to the store reads
// more than a page), and refuses a listing past MaxListedRows. An error
// wrapping ErrOnlyRunning says to ask the running s3cond instead.
func (s *Store) List(ctx context.Context, prefix string) ([]dynamolease.Record, error) {
	rows, err := s.kind.list(ctx, prefix, s.pageRows)
	if err != nil {
		return nil, err
	}
	dynamolease.SortRecords(rows)
	return rows, nil
}

// Release marks the row (path, etag) released at generation, as
// dynamolease.ReleaseRow does. An error wrapping ErrOnlyRunning says to ask
// the running s3cond instead.
func (s *Store) Release(ctx context.Context, path, etag string, generation uint64) (*dynamolease.Record, error) {
	return s.kind.release(ctx, path, etag, generation)
}

// Create is `table create`: it creates the DynamoDB table (idempotent) or
// checks that the etcd cluster answers, and says which; the embedded and
// memory stores have nothing to create.
func (s *Store) Create(ctx context.Context, log zerolog.Logger) (string, error) {
	return s.kind.create(ctx, log)
}

// TableExists reports whether the store's table exists (DynamoDB's; the
// others' always do).
func (s *Store) TableExists(ctx context.Context) (bool, error) { return s.kind.exists(ctx) }

// Where names where the rows are, for messages.
func (s *Store) Where() string { return s.kind.where() }

// Close closes what the store opened, last opened first.
func (s *Store) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// tableStore is a shared store (DynamoDB, etcd): one table, read and
// written the same way by a serving s3cond and by a one-shot command.
type tableStore struct {
	table dynamolease.Table
	name  string // lease.store
}

func (t tableStore) serve(*Store, dynamolease.Options, zerolog.Logger) (dynamolease.Table, error) {
	return t.table, nil
}

func (t tableStore) list(ctx context.Context, prefix string, pageRows int) ([]dynamolease.Record, error) {
	pages, ok := t.table.(dynamolease.PageLister)
	if !ok {
		return nil, fmt.Errorf("lease store %s cannot list its rows a page at a time", t.name)
	}
	return readPages(ctx, pages, prefix, pageRows)
}

func (t tableStore) release(ctx context.Context, path, etag string, generation uint64) (*dynamolease.Record, error) {
	return dynamolease.ReleaseRow(ctx, t.table, path, etag, generation)
}

func (t tableStore) where() string { return "lease store " + t.name }

// readPages reads every page of the listing under prefix, pageRows rows
// of the store at most per call.
func readPages(ctx context.Context, pages dynamolease.PageLister, prefix string, pageRows int) ([]dynamolease.Record, error) {
	var rows []dynamolease.Record
	after := ""
	for {
		page, next, err := pages.ListPage(ctx, prefix, after, pageRows)
		if err != nil {
			return nil, err
		}
		rows = append(rows, page...)
		if len(rows) > MaxListedRows {
			return nil, fmt.Errorf("the listing passed %d rows: narrow it with --prefix", MaxListedRows)
		}
		if next == "" {
			return rows, nil
		}
		after = next
	}
}

// memoryStore is lease.store memory: the rows live in the serving process.
type memoryStore struct{}

func (memoryStore) serve(*Store, dynamolease.Options, zerolog.Logger) (dynamolease.Table, error) {
	return dynamolease.NewMemTable(), nil
}

var errMemoryRows = onlyRunning{"lease.store is memory: the leases live in the running s3cond"}

func (memoryStore) list(context.Context, string, int) ([]dynamolease.Record, error) {
	return nil, errMemoryRows
}

func (memoryStore) release(context.Context, string, string, uint64) (*dynamolease.Record, error) {
	return nil, errMemoryRows
}

func (memoryStore) create(context.Context, zerolog.Logger) (string, error) {
	return "", nothingToCreate(config.LeaseStoreMemory)
}

func (memoryStore) exists(context.Context) (bool, error) { return true, nil }

func (memoryStore) where() string { return "the running s3cond (lease.store memory)" }

func nothingToCreate(store string) error {
	return fmt.Errorf("lease.store is %q: table create needs lease.store: dynamodb (or etcd, to check the cluster)", store)
}
