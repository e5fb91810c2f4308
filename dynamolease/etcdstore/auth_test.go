package etcdstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/etcdstore"
	"github.com/s3cond/s3cond/internal/testservers"
)

// With etcd's auth on, a user whose role may read and write the prefix
// only (operations.md's RBAC advice) can take and release leases; a wrong
// password fails without the password in the error.
func TestEtcdWithAuthAndAPrefixRole(t *testing.T) {
	cluster := testservers.StartEtcdClusterOf(t, 1)
	ctx := testContext(t, 30*time.Second)
	const prefix, password = "s3cond/leases/", "etcd-user-password-value"
	enableEtcdAuth(t, ctx, cluster.Client(t), prefix, password)

	_, err := etcdstore.NewClient(etcdstore.ClientOptions{Endpoints: cluster.Endpoints(),
		Username: "s3cond", Password: "wrong-" + password, DialTimeout: 5 * time.Second})
	if err == nil {
		t.Fatal("a wrong password connected")
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("the error shows the password: %v", err)
	}

	client, err := etcdstore.NewClient(etcdstore.ClientOptions{Endpoints: cluster.Endpoints(),
		Username: "s3cond", Password: password, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c := dynamolease.NewCommitter(etcdstore.New(client, etcdstore.WithPrefix(prefix)), dynamolease.Options{}, zerolog.Nop())
	lease, err := c.Acquire(ctx, "b/k", "*", nil)
	if err != nil {
		t.Fatalf("Acquire as a user limited to the prefix: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	outside := etcdstore.New(client, etcdstore.WithPrefix("elsewhere/"))
	if _, err := outside.Get(ctx, "b/k", "*"); err == nil {
		t.Fatal("the user read outside its prefix: the role is not what the test set up")
	}
}

// enableEtcdAuth turns etcd's auth on with a root user and a user s3cond
// whose role may read and write prefix only (operations.md's RBAC advice).
func enableEtcdAuth(t *testing.T, ctx context.Context, admin *clientv3.Client, prefix, password string) {
	t.Helper()
	steps := []func() error{
		func() error { _, err := admin.RoleAdd(ctx, "root"); return err },
		func() error { _, err := admin.UserAdd(ctx, "root", "root-password"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "s3cond"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "s3cond", prefix, clientv3.GetPrefixRangeEnd(prefix),
				clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "s3cond", password); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "s3cond", "s3cond"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("auth setup step %d: %v", i, err)
		}
	}
}

// etcd's simple auth tokens (3.4's default) expire after --auth-token-ttl
// seconds unused; the client must fetch a new one by itself, so conditional
// writes keep working after an idle spell, without a restart.
func TestEtcdLeasesOutliveAnExpiredAuthToken(t *testing.T) {
	const tokenTTL = 2 * time.Second
	cluster := testservers.StartEtcdClusterWithFlags(t, 1, "--auth-token", "simple", "--auth-token-ttl", "2")
	ctx := testContext(t, 60*time.Second)
	const prefix, password = "s3cond/leases/", "etcd-user-password-value"
	enableEtcdAuth(t, ctx, cluster.Client(t), prefix, password)
	client, err := etcdstore.NewClient(etcdstore.ClientOptions{Endpoints: cluster.Endpoints(),
		Username: "s3cond", Password: password, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c := dynamolease.NewCommitter(etcdstore.New(client, etcdstore.WithPrefix(prefix)), dynamolease.Options{}, zerolog.Nop())
	for round := range 3 {
		lease, err := c.Acquire(ctx, fmt.Sprintf("b/k%d", round), "*", nil)
		if err != nil {
			t.Fatalf("Acquire after %d idle spells longer than the token's lifetime: %v", round, err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatalf("Release in round %d: %v", round, err)
		}
		// Idle for longer than the token lives: the server's own timer,
		// nothing this test could wait on instead.
		time.Sleep(2*tokenTTL + time.Second)
	}
}
