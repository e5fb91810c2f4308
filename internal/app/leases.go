package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/etcdstore"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
)

// leaseLister is table's Lister, seen through the wrappers app puts
// around tables; nil when it has none.
func leaseLister(table dynamolease.Table) dynamolease.Lister {
	l, _ := table.(dynamolease.Lister)
	return l
}

// withLeaseEndpoints adds GET /leases (read-only, a page at a time) for
// holders of token, and POST /leases/release when release is true (the
// rows only this process can write). Without a token neither is served.
func withLeaseEndpoints(base http.Handler, table dynamolease.Table, lease config.Lease, token string, release bool, log zerolog.Logger) http.Handler {
	pages, _ := table.(dynamolease.PageLister)
	if token == "" || (pages == nil && !release) {
		return base
	}
	mux := http.NewServeMux()
	mux.Handle("/", base)
	if pages != nil {
		mux.Handle("GET "+admin.LeasesPath, admin.LeasesHandler(pages, token, lease.TTL, lease.MaxClockSkewRate))
	}
	if release {
		// Every method: the handler answers 405 itself, where "/" would
		// answer another method's request with 404.
		mux.Handle(admin.LeaseReleasePath, admin.ReleaseHandler(table, token, log))
	}
	return mux
}

// LeaseStore is a shared lease store (DynamoDB or etcd) opened with a
// config's credentials, for `s3cond leases`.
type LeaseStore struct {
	Table  dynamolease.Table
	Lister dynamolease.Lister
	close  func() error
}

// Close closes the store's client.
func (s *LeaseStore) Close() error { return s.close() }

// OpenLeaseStore opens cfg's lease store when it is shared (dynamodb,
// etcd); the embedded and memory stores belong to one s3cond process.
func OpenLeaseStore(ctx context.Context, cfg *config.Config) (*LeaseStore, error) {
	switch cfg.Lease.Store {
	case config.LeaseStoreDynamoDB:
		client, err := newDynamoClient(ctx, cfg)
		if err != nil {
			return nil, err
		}
		table := newDynamoLeaseTable(client, cfg)
		return &LeaseStore{Table: table, Lister: leaseLister(table), close: func() error { return nil }}, nil
	case config.LeaseStoreEtcd:
		client, err := newEtcdClient(cfg)
		if err != nil {
			return nil, err
		}
		table := etcdstore.New(client, etcdstore.WithPrefix(cfg.Lease.Etcd.Prefix),
			etcdstore.WithCallTimeout(cfg.Lease.Etcd.RequestTimeout))
		return &LeaseStore{Table: table, Lister: table, close: client.Close}, nil
	}
	return nil, fmt.Errorf("lease.store %q is not a shared lease store", cfg.Lease.Store)
}
