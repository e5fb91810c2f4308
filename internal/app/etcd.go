package app

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/s3cond/s3cond/dynamolease/etcdstore"
	"github.com/s3cond/s3cond/internal/config"
)

func newEtcdClient(cfg *config.Config) (*clientv3.Client, error) {
	e := cfg.Lease.Etcd
	client, err := etcdstore.NewClient(etcdstore.ClientOptions{
		Endpoints:   e.Endpoints,
		Username:    e.Username,
		Password:    e.Password,
		CAFile:      e.TLS.CAFile,
		CertFile:    e.TLS.CertFile,
		KeyFile:     e.TLS.KeyFile,
		DialTimeout: e.DialTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("lease.etcd: %w", err)
	}
	return client, nil
}

// openEtcdTable connects to the etcd cluster of cfg; the App closes the
// client when it closes.
func (a *App) openEtcdTable(cfg *config.Config) (*etcdstore.Table, error) {
	client, err := newEtcdClient(cfg)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func(context.Context) error { return client.Close() })
	return etcdstore.New(client,
		etcdstore.WithPrefix(cfg.Lease.Etcd.Prefix),
		etcdstore.WithCallTimeout(cfg.Lease.Etcd.RequestTimeout)), nil
}

// CheckEtcd is `s3cond table create` for the etcd store: there is nothing
// to create (rows are keys under the prefix, created by the first lease),
// so it checks that the cluster answers a linearizable read with these
// endpoints, credentials and TLS settings, which needs a leader.
func CheckEtcd(ctx context.Context, cfg *config.Config) error {
	client, err := newEtcdClient(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	table := etcdstore.New(client, etcdstore.WithPrefix(cfg.Lease.Etcd.Prefix),
		etcdstore.WithCallTimeout(cfg.Lease.Etcd.RequestTimeout))
	if _, err := table.Get(ctx, readinessProbeKey, "*"); err != nil {
		return fmt.Errorf("lease.etcd: the cluster at %v does not answer: %w", cfg.Lease.Etcd.Endpoints, err)
	}
	return nil
}
