package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testEnv stands in for os.Environ(): Load must read nothing else.
var testEnv = []string{"HOME=/home/tester", "PATH=/usr/bin"}

func TestLoadRejectsBadFilesWithOneLineNamingTheKey(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad config files found: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			firstLine, _, _ := strings.Cut(string(data), "\n")
			want, ok := strings.CutPrefix(firstLine, "# error: ")
			if !ok {
				t.Fatalf("%s must start with '# error: <expected message>'", file)
			}
			cfg, err := Load(file, testEnv)
			if err == nil {
				t.Fatalf("Load accepted a bad file; got %+v", cfg)
			}
			if err.Error() != want {
				t.Errorf("error\n got: %s\nwant: %s", err, want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestLoadMinimalFileKeepsDefaultsForUnsetKeys(t *testing.T) {
	cfg, err := Load("testdata/good/minimal.yaml", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Keys = []Key{{AccessKeyID: "minimal-key", Secret: "minimal-secret", Buckets: []string{"*"}, Access: AccessReadWrite}}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
}

func TestLoadFleetFileResolvesEveryIndirection(t *testing.T) {
	env := append(testEnv, "BACKEND_KEY_ID=backend-id", "BACKEND_SECRET=backend-secret", "READER_SECRET=reader-secret")
	cfg, err := Load("testdata/good/fleet.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Backend.Credentials; got.AccessKeyID != "backend-id" || got.SecretAccessKey != "backend-secret" {
		t.Errorf("backend credentials from env: got %q / %q", got.AccessKeyID, got.SecretAccessKey)
	}
	if cfg.Keys[0].Secret != "reader-secret" || cfg.Keys[1].Secret != "writer-secret" {
		t.Errorf("key secrets: got %q, %q", cfg.Keys[0].Secret, cfg.Keys[1].Secret)
	}
	if !reflect.DeepEqual(cfg.Keys[0].Buckets, []string{"analytics", "logs-*"}) || cfg.Keys[0].CanWrite() {
		t.Errorf("reader key: %+v", cfg.Keys[0])
	}
	if _, other := cfg.Backend.Buckets["other"]; cfg.Backend.Buckets["logs"] != "prod.logs-eu" || other {
		t.Errorf("bucket mapping: %v", cfg.Backend.Buckets)
	}
	l := cfg.Lease
	if l.Timeout != 30*time.Second || l.MaxClockSkewRate != 1.5 || l.PollInterval != 250*time.Millisecond ||
		l.TTL != 2*time.Hour || l.WaitBudget != 5*time.Second || l.TakeoverAfter() != 45*time.Second {
		t.Errorf("lease timings: %+v", l)
	}
	if l.DynamoDB.Endpoint != "http://127.0.0.1:8000" || l.DynamoDB.Credentials.SecretAccessKey != "ddb-secret" {
		t.Errorf("dynamodb: %+v", l.DynamoDB)
	}
	if cfg.Server.MaxSkew != 5*time.Minute || cfg.Server.Domain != "s3.example.com" || cfg.Log.Format != LogFormatJSON {
		t.Errorf("server/log: %+v %+v", cfg.Server, cfg.Log)
	}
}

// The annotated config.yaml is the schema people copy; it must stay loadable.
func TestRepositoryConfigYAMLLoadsAndValidates(t *testing.T) {
	cfg, err := Load("../../config.yaml", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Backend.Type != BackendS3 || cfg.Backend.Endpoint != "http://127.0.0.1:7070" ||
		cfg.Backend.Credentials.SecretAccessKey != "backend-secret-key" || cfg.Keys[0].AccessKeyID != "AKIAS3CONDEXAMPLE" ||
		cfg.Lease.WaitBudget != 10*time.Second || cfg.Lease.PollInterval != 100*time.Millisecond {
		t.Errorf("config.yaml did not load as written: %+v", cfg)
	}
}

func TestLoadWithoutFileIsTheDevelopmentDefault(t *testing.T) {
	cfg, err := Load("", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("got %+v", cfg)
	}
	if k := cfg.Keys[0]; k.AccessKeyID != DevAccessKeyID || k.Secret != DevSecret || !k.CanWrite() {
		t.Errorf("development key: %+v", k)
	}
	if cfg.Backend.Type != BackendEmbedded || cfg.Lease.Store != LeaseStoreEmbedded {
		t.Errorf("defaults are not embedded: %+v", cfg)
	}
	if got, want := cfg.LeasePath(), filepath.Join("s3cond-data", "leases.db"); got != want {
		t.Errorf("LeasePath = %q, want %q", got, want)
	}
}

func TestLoadEmptyFileStillNeedsKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, testEnv)
	if err == nil || !strings.HasPrefix(err.Error(), "config: keys: at least one client key is required") {
		t.Fatalf("got %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), testEnv)
	if err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Fatalf("got %v", err)
	}
}

func TestSecretEnvMayStartWithThePrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	data := "keys:\n  - access_key_id: k\n    secret_env: S3COND_CLIENT_SECRET\n    buckets: ['*']\n    access: read-only\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(testEnv, "S3COND_CLIENT_SECRET=from-env")
	cfg, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	if unused := cfg.UnusedEnv(env); len(unused) > 0 {
		t.Errorf("a variable read by secret_env is reported unused: %v", unused)
	}
	if cfg.Keys[0].Secret != "from-env" {
		t.Errorf("secret = %q", cfg.Keys[0].Secret)
	}
}

func TestEmbeddedTypeOverAStoreIsRefused(t *testing.T) {
	// The fleet file names a store and its credentials; switching it to the
	// embedded store by one variable would ignore both and keep data on
	// local disk, so it is refused, before any credential is read.
	env := append(testEnv, "READER_SECRET=r", "S3COND_BACKEND_TYPE=embedded", "S3COND_BACKEND_ADDRESSING=path",
		"S3COND_BACKEND_CONDITIONAL=lease", "BACKEND_SECRET=backend-secret-value")
	_, err := Load("testdata/good/fleet.yaml", env)
	if err == nil || !strings.Contains(err.Error(), "backend.type is embedded") {
		t.Fatalf("err = %v, want a refusal naming backend.type", err)
	}
	if strings.Contains(err.Error(), "backend-secret-value") {
		t.Fatalf("the error shows a secret: %v", err)
	}
}

func TestEndpointWithoutTypeMeansS3(t *testing.T) {
	path := t.TempDir() + "/store.yaml"
	writeFile(t, path, []byte(`backend:
  endpoint: https://storage.example.com
  credentials:
    source: static
    access_key_id: AKIDPROD
    secret_access_key: prod-secret
keys:
  - access_key_id: k0
    secret: s0
    buckets: ["*"]
    access: read-write
`))
	cfg, err := Load(path, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Backend.Type != BackendS3 {
		t.Fatalf("backend.type = %q, want s3 inferred from the endpoint", cfg.Backend.Type)
	}
	// Through the environment alone, too.
	cfg, err = Load("", append(testEnv, "S3COND_BACKEND_ENDPOINT=http://127.0.0.1:7070"))
	if err != nil || cfg.Backend.Type != BackendS3 {
		t.Fatalf("env endpoint: type %v, err %v", cfg, err)
	}
	// Without an endpoint, the development store stays the default.
	cfg, err = Load("", testEnv)
	if err != nil || cfg.Backend.Type != BackendEmbedded {
		t.Fatalf("no endpoint: %v, %v", cfg, err)
	}
}

func TestNamedBackendsTakeDefaultsAndRouteTheirBuckets(t *testing.T) {
	path := t.TempDir() + "/backends.yaml"
	writeFile(t, path, []byte(`keys:
  - access_key_id: k0
    secret: s0
    buckets: ["*"]
    access: read-write
backend:
  type: s3
  endpoint: http://127.0.0.1:7070
backends:
  - name: aws
    endpoint: https://s3.eu-west-1.amazonaws.com
    region: eu-west-1
    conditional: native
    probe_bucket: prod-ledger
    buckets:
      ledger: prod-ledger
`))
	cfg, err := Load(path, []string{"S3COND_BACKENDS_0_CHECKSUMS=forward"})
	if err != nil {
		t.Fatal(err)
	}
	aws := cfg.Backends[0]
	if aws.Type != BackendS3 || aws.Addressing != AddressingPath || aws.Credentials.Source != CredentialsDefault ||
		aws.Pool.MaxIdleConnsPerHost == 0 || aws.Conditional != ConditionalNative || aws.Checksums != ChecksumsForward {
		t.Fatalf("named backend defaults or overrides wrong: %+v", aws)
	}
	if aws.Name != "aws" || aws.Buckets["ledger"] != "prod-ledger" {
		t.Fatalf("backend %q maps ledger to %q", aws.Name, aws.Buckets["ledger"])
	}
}

func TestEmbeddedBackendRefusesFramedBodies(t *testing.T) {
	// gofakes3 would keep the aws-chunked framing as the object's content.
	_, err := Load("", append(testEnv, "S3COND_BACKEND_CONDITIONAL_BODY_FRAMING=aws-chunked"))
	if err == nil || !strings.Contains(err.Error(), "backend.conditional_body_framing") {
		t.Fatalf("err = %v, want a refusal naming backend.conditional_body_framing", err)
	}
	if _, err := Load("", append(testEnv, "S3COND_BACKEND_CONDITIONAL_BODY_FRAMING=none")); err != nil {
		t.Fatalf("framing none on the embedded backend: %v", err)
	}
}
