package etcdstore_test

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/etcdstore"
	"github.com/s3cond/s3cond/internal/testservers"
)

// An etcd that serves https:// and requires a client certificate: leases
// work with the CA and client pair of EtcdClientOptions, and a client
// without the pair is refused.
func TestEtcdOverTLSWithClientCertificate(t *testing.T) {
	cluster, certs := testservers.StartEtcdClusterTLS(t)
	ctx := testContext(t, 30*time.Second)
	client, err := etcdstore.NewClient(etcdstore.ClientOptions{Endpoints: cluster.Endpoints(),
		CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c := dynamolease.NewCommitter(etcdstore.New(client), dynamolease.Options{}, zerolog.Nop())
	lease, err := c.Acquire(ctx, "b/k", "*", nil)
	if err != nil {
		t.Fatalf("Acquire over TLS: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	withoutPair, err := etcdstore.NewClient(etcdstore.ClientOptions{Endpoints: cluster.Endpoints(), CAFile: certs.CA})
	if err != nil {
		t.Fatal(err)
	}
	defer withoutPair.Close()
	tbl := etcdstore.New(withoutPair, etcdstore.WithCallTimeout(2*time.Second))
	if _, err := tbl.Get(ctx, "b/k", "*"); err == nil {
		t.Fatal("a client without a certificate read a lease row")
	}
}
