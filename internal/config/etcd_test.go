package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEtcdFromEnvironmentWithPasswordIndirection(t *testing.T) {
	env := append(testEnv,
		"S3COND_KEYS_0_ACCESS_KEY_ID=k", "S3COND_KEYS_0_SECRET=s", "S3COND_KEYS_0_BUCKETS=*", "S3COND_KEYS_0_ACCESS=read-write",
		"S3COND_LEASE_STORE=etcd",
		"S3COND_LEASE_ETCD_ENDPOINTS=https://10.0.0.1:2379, https://10.0.0.2:2379",
		"S3COND_LEASE_ETCD_USERNAME=s3cond",
		"S3COND_LEASE_ETCD_PASSWORD_ENV=ETCD_PASSWORD", "ETCD_PASSWORD=etcd-password-value",
		"S3COND_LEASE_ETCD_TLS_CA_FILE=/etc/etcd/ca.pem",
		"S3COND_LEASE_ETCD_REQUEST_TIMEOUT=2s",
	)
	cfg, err := Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Lease.Etcd
	want := Etcd{
		Endpoints: []string{"https://10.0.0.1:2379", "https://10.0.0.2:2379"},
		Prefix:    DefaultEtcdPrefix, Username: "s3cond", Password: "etcd-password-value", PasswordEnv: "ETCD_PASSWORD",
		TLS:         EtcdTLS{CAFile: "/etc/etcd/ca.pem"},
		DialTimeout: DefaultEtcdDialTimeout, RequestTimeout: 2 * time.Second,
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("lease.etcd = %+v\nwant %+v", e, want)
	}
	if unused := cfg.UnusedEnv(env); len(unused) != 0 {
		t.Errorf("variables reported as naming no key: %v", unused)
	}

	out, err := Render(cfg.Masked())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "etcd-password-value") {
		t.Fatalf("check-config output shows the etcd password:\n%s", out)
	}
	if !strings.Contains(string(out), "password: '"+MaskedValue+"'") || !strings.Contains(string(out), "https://10.0.0.2:2379") {
		t.Fatalf("masked output lost the etcd settings:\n%s", out)
	}
	if cfg.Lease.Etcd.Password != "etcd-password-value" {
		t.Fatal("Masked changed the original config")
	}
}

// The etcd settings are checked only when lease.store is etcd, so a file
// may carry them while it runs on another store.
func TestEtcdSettingsIgnoredByOtherStores(t *testing.T) {
	env := append(testEnv, "S3COND_LEASE_ETCD_PASSWORD_ENV=UNSET_VARIABLE", "S3COND_LEASE_ETCD_PREFIX=")
	if _, err := Load("", env); err != nil {
		t.Fatalf("embedded store with unused etcd settings: %v", err)
	}
}
