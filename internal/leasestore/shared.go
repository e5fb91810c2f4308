package leasestore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/rs/zerolog"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/dynamolease/etcdstore"
	"github.com/s3cond/s3cond/internal/awscreds"
	"github.com/s3cond/s3cond/internal/config"
)

// dynamoStore is lease.store dynamodb: the table every s3cond of a fleet
// shares, on one client.
type dynamoStore struct {
	tableStore
	client    *dynamodb.Client
	tableName string // lease.dynamodb.table
}

// openDynamo makes cfg's DynamoDB client (it connects on first use) and
// its lease table, rows named as lease.dynamodb.key_format says. An
// arrow-rs keyed table refuses leases on other buckets than its own as
// unsupported: the proxy answers 501 NotImplemented rather than the 503 of
// a failing store.
func openDynamo(ctx context.Context, cfg *config.Config) (dynamoStore, error) {
	d := cfg.Lease.DynamoDB
	creds, err := awscreds.Provider(ctx, d.Credentials, d.Region)
	if err != nil {
		return dynamoStore{}, fmt.Errorf("lease.dynamodb.credentials: %w", err)
	}
	client, err := dynamostore.NewClient(ctx, d.Region, d.Endpoint, creds)
	if err != nil {
		return dynamoStore{}, fmt.Errorf("lease.dynamodb: %w", err)
	}
	var opts []dynamostore.Option
	if d.KeyFormat == config.KeyFormatArrowRS {
		opts = append(opts, dynamostore.WithArrowRSKeys(d.Bucket))
	}
	table := dynamostore.New(client, d.Table, opts...)
	return dynamoStore{tableStore: tableStore{table: table, name: config.LeaseStoreDynamoDB}, client: client, tableName: d.Table}, nil
}

// create creates the table (idempotent). A TTL setup failure (dynalite has
// no UpdateTimeToLive) is a warning, not an error.
func (d dynamoStore) create(ctx context.Context, log zerolog.Logger) (string, error) {
	err := dynamostore.CreateTable(ctx, d.client, d.tableName)
	if errors.Is(err, dynamostore.ErrTTLUnavailable) {
		log.Warn().Err(err).Str("table", d.tableName).
			Msg("the lease table works, but its TTL could not be enabled: lease rows stay until removed by hand")
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("create table %s: %w", d.tableName, err)
	}
	return fmt.Sprintf("lease table %s is ready", d.tableName), nil
}

func (d dynamoStore) exists(ctx context.Context) (bool, error) {
	return dynamostore.TableExists(ctx, d.client, d.tableName)
}

// etcdStore is lease.store etcd: rows are keys under a prefix of a cluster
// every s3cond of a fleet shares.
type etcdStore struct {
	tableStore
	client     *clientv3.Client
	endpoints  []string
	rowsPrefix string
}

// openEtcd makes cfg's etcd client; Store.Close closes it.
func openEtcd(cfg *config.Config) (etcdStore, error) {
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
		return etcdStore{}, fmt.Errorf("lease.etcd: %w", err)
	}
	table := etcdstore.New(client, etcdstore.WithPrefix(e.Prefix), etcdstore.WithCallTimeout(e.RequestTimeout))
	return etcdStore{tableStore: tableStore{table: table, name: config.LeaseStoreEtcd}, client: client,
		endpoints: e.Endpoints, rowsPrefix: e.Prefix}, nil
}

// create has nothing to create (rows are keys under the prefix, created
// by the first lease), so it checks that the cluster answers a
// linearizable read with these endpoints, credentials and TLS settings,
// which needs a leader.
func (e etcdStore) create(ctx context.Context, _ zerolog.Logger) (string, error) {
	if _, err := e.table.Get(ctx, ProbeKey, "*"); err != nil {
		return "", fmt.Errorf("lease.etcd: the cluster at %v does not answer: %w", e.endpoints, err)
	}
	return fmt.Sprintf("lease store etcd at %s answers; nothing to create (lease rows are keys under %q, created by the first lease)",
		strings.Join(e.endpoints, ","), e.rowsPrefix), nil
}

func (etcdStore) exists(context.Context) (bool, error) { return true, nil }
