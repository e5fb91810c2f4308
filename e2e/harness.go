package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// Region is the region every client signs for.
const Region = "us-east-1"

// Mode says which server the clients under test talk to.
type Mode string

const (
	// ModeS3cond: clients talk to s3cond, which forwards to versitygw.
	ModeS3cond Mode = "s3cond"
	// ModeDirect: clients talk to versitygw itself, to validate the tests.
	ModeDirect Mode = "direct"
)

// TargetMode reads S3COND_E2E_TARGET (default: s3cond).
func TargetMode() Mode {
	if strings.EqualFold(os.Getenv("S3COND_E2E_TARGET"), string(ModeDirect)) {
		return ModeDirect
	}
	return ModeS3cond
}

// Credentials is an access key pair a client signs with.
type Credentials struct {
	AccessKey string
	Secret    string
}

// BackendKind names the S3 store behind s3cond in a test.
type BackendKind string

const (
	// BackendVersityGW enforces If-None-Match and If-Match on PutObject
	// itself (the default backend).
	BackendVersityGW BackendKind = "versitygw"
	// BackendS3rver ignores both headers: only s3cond can make a race on it
	// come out right.
	BackendS3rver BackendKind = "s3rver"
	// BackendMoto is moto's S3 emulation, which keeps the configurations
	// (replication, inventory, notification, policy) it is given.
	BackendMoto BackendKind = "moto"
	// BackendRGW is Ceph's RADOS Gateway, one per test binary run (it takes
	// about 20 s to start): tests reach it through WithStore.
	BackendRGW BackendKind = "rgw"
	// BackendSeaweedFS is SeaweedFS's S3 gateway, an opt-in store (see
	// e2e/seaweedfs_test.go), also reached through WithStore.
	BackendSeaweedFS BackendKind = "seaweedfs"
)

// Store is how a test reaches the backend store itself, behind s3cond.
type Store struct {
	Kind     BackendKind
	Endpoint string
	Cred     Credentials // the store's own (root) key
}

// StartStore starts a store of the given kind; versitygw is also returned
// as such (nil for s3rver), for tests that stop or measure its process.
func StartStore(t testing.TB, kind BackendKind) (Store, *testservers.VersityGW) {
	t.Helper()
	if kind == BackendMoto {
		return Store{Kind: kind, Endpoint: testservers.StartMotoS3(t), Cred: Credentials{"motokey", "motosecret"}}, nil
	}
	if kind == BackendS3rver {
		s := testservers.StartS3rver(t)
		return Store{Kind: kind, Endpoint: s.Endpoint, Cred: Credentials{s.AccessKey, s.Secret}}, nil
	}
	v := testservers.StartVersityGW(t)
	return Store{Kind: BackendVersityGW, Endpoint: v.Endpoint, Cred: Credentials{v.AccessKey, v.Secret}}, v
}

// Env is one test's servers: a backend store (versitygw unless WithBackend
// says otherwise) and, in ModeS3cond, one or more s3cond processes in front
// of it.
type Env struct {
	Mode Mode
	// Store is the backend store; Backend is the same store when it is
	// versitygw (nil otherwise).
	Store    Store
	Backend  *testservers.VersityGW
	Proxies  []*testservers.S3cond // empty in ModeDirect
	Endpoint string                // what the clients under test talk to

	// RW may read and write every bucket, RO may only read, and Granted may
	// read and write only buckets named "granted-*". In ModeDirect all three
	// are versitygw's own key (it has no others).
	RW, RO, Granted Credentials

	// Config is the configuration the s3cond processes were started with.
	Config Config

	processEnv []string
}

// Option adjusts how NewEnv sets things up.
type Option func(*envSetup)

type envSetup struct {
	proxies   int
	backend   BackendKind
	configure []func(*Config)
	env       []string
	// backendIAM starts versitygw with its IAM service (admin API users).
	backendIAM bool
	// store, when set, is a store already running: NewEnv starts none.
	store *Store
}

// WithBackendIAM starts versitygw with its internal IAM service, so that
// its admin API creates real accounts.
func WithBackendIAM() Option { return func(s *envSetup) { s.backendIAM = true } }

// WithBackend picks the store behind s3cond (default versitygw).
func WithBackend(kind BackendKind) Option { return func(s *envSetup) { s.backend = kind } }

// WithStore puts s3cond in front of a store the test already runs (one
// that is slow to start and shared by several tests, such as Ceph RGW)
// instead of starting one.
func WithStore(store Store) Option { return func(s *envSetup) { s.store = &store } }

// WithConfig lets a test change s3cond's configuration before it starts.
func WithConfig(change func(*Config)) Option {
	return func(s *envSetup) { s.configure = append(s.configure, change) }
}

// WithProxies starts n s3cond processes on the same configuration (apart from
// their listen address and data_dir); they share a lease table only if the
// configuration uses the dynamodb store.
func WithProxies(n int) Option { return func(s *envSetup) { s.proxies = n } }

// WithProcessEnv passes extra environment variables to every s3cond process.
func WithProcessEnv(kv ...string) Option {
	return func(s *envSetup) { s.env = append(s.env, kv...) }
}

// NewEnv starts the backend store and, unless in ModeDirect, s3cond in
// front of it.
func NewEnv(t testing.TB, opts ...Option) *Env {
	t.Helper()
	setup := envSetup{proxies: 1}
	for _, opt := range opts {
		opt(&setup)
	}
	e := &Env{Mode: TargetMode()}
	switch {
	case setup.store != nil:
		e.Store = *setup.store
	case setup.backendIAM:
		e.Backend = testservers.StartVersityGWWithIAM(t)
		e.Store = Store{Kind: BackendVersityGW, Endpoint: e.Backend.Endpoint, Cred: Credentials{e.Backend.AccessKey, e.Backend.Secret}}
	default:
		e.Store, e.Backend = StartStore(t, setup.backend)
	}
	if e.Mode == ModeDirect {
		e.Endpoint = e.Store.Endpoint
		e.RW, e.RO, e.Granted = e.Store.Cred, e.Store.Cred, e.Store.Cred
		return e
	}
	e.RW = Credentials{"AKIAE2EREADWRITE", "e2e-read-write-secret-0123456789"}
	e.RO = Credentials{"AKIAE2EREADONLY", "e2e-read-only-secret-0123456789"}
	e.Granted = Credentials{"AKIAE2EGRANTED", "e2e-granted-secret-0123456789"}
	e.Config = e.baseConfig()
	for _, change := range setup.configure {
		change(&e.Config)
	}
	if e.Config.Lease.Store == "dynamodb" {
		e.createLeaseTable(t)
	}
	e.processEnv = setup.env
	for i := 0; i < setup.proxies; i++ {
		e.Proxies = append(e.Proxies, e.StartProxy(t, nil))
	}
	e.Endpoint = e.Proxies[0].Endpoint
	return e
}

// StartProxy starts one more s3cond process on e.Config, changed by change
// (may be nil), with its own address and data_dir. It is not added to
// e.Proxies.
func (e *Env) StartProxy(t testing.TB, change func(*Config)) *testservers.S3cond {
	t.Helper()
	cfg := e.Config
	cfg.Keys = slices.Clone(cfg.Keys)
	if change != nil {
		change(&cfg)
	}
	cfg.Server.Listen = testservers.FreeAddr(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return testservers.StartS3cond(t, text, e.processEnv...)
}

// WithDynamoDBLeases points the lease store at a DynamoDB-compatible
// endpoint (moto or dynalite); NewEnv creates the table with
// `s3cond table create` before starting s3cond.
func WithDynamoDBLeases(endpoint string) Option {
	return WithConfig(func(c *Config) {
		c.Lease.Store = "dynamodb"
		c.Lease.DynamoDB = DynamoDBConfig{Table: "s3cond-leases", Region: Region, Endpoint: endpoint,
			Credentials: CredentialsConfig{Source: "static", AccessKeyID: "testing", SecretAccessKey: "testing"}}
	})
}

// WriteConfigFile writes cfg, with a fresh data_dir, as s3cond.yaml in a new
// temporary directory, for running s3cond commands against it.
func WriteConfigFile(t testing.TB, cfg Config) (dir, path string) {
	t.Helper()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	path = filepath.Join(dir, "s3cond.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatalf("write config: %v", err)
	}
	return dir, path
}

func (e *Env) createLeaseTable(t testing.TB) {
	t.Helper()
	cfg := e.Config
	cfg.Server.Listen = testservers.FreeAddr(t)
	dir, path := WriteConfigFile(t, cfg)
	// Twice: the command must be idempotent.
	for range 2 {
		testservers.RunS3condCommand(t, dir, nil, "table", "create", "--config", path)
	}
}

func (e *Env) baseConfig() Config {
	return Config{
		Server: ServerConfig{Region: Region, MaxSkew: "15m"},
		Backend: BackendConfig{
			Type:       "s3",
			Endpoint:   e.Store.Endpoint,
			Region:     Region,
			Addressing: "path",
			Credentials: CredentialsConfig{Source: "static",
				AccessKeyID: e.Store.Cred.AccessKey, SecretAccessKey: e.Store.Cred.Secret},
			Checksums:   "verify-only",
			Conditional: "lease",
		},
		Keys: []KeyConfig{
			{AccessKeyID: e.RW.AccessKey, Secret: e.RW.Secret, Buckets: []string{"*"}, Access: "read-write"},
			{AccessKeyID: e.RO.AccessKey, Secret: e.RO.Secret, Buckets: []string{"*"}, Access: "read-only"},
			{AccessKeyID: e.Granted.AccessKey, Secret: e.Granted.Secret, Buckets: []string{"granted-*"}, Access: "read-write"},
		},
		Lease: LeaseConfig{Store: "embedded", Timeout: "20s", MaxClockSkewRate: 3,
			PollInterval: "100ms", TTL: "1h", WaitBudget: "10s"},
		Log: LogConfig{Level: "info", Format: "console"},
	}
}

// RequireProxy stops a test that checks something only s3cond does (several
// keys, grants, leases) when the clients talk to versitygw directly.
func (e *Env) RequireProxy(t testing.TB) {
	t.Helper()
	if e.Mode == ModeDirect {
		t.Skip("checks s3cond-only behaviour; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
}

// Client is an aws-sdk-go-v2 S3 client for the endpoint under test.
func (e *Env) Client(t testing.TB, cred Credentials, opts ...func(*s3.Options)) *s3.Client {
	return e.ClientAt(t, e.Endpoint, cred, opts...)
}

// ClientAt is Client for a given endpoint (one of several s3cond processes).
func (e *Env) ClientAt(t testing.TB, endpoint string, cred Credentials, opts ...func(*s3.Options)) *s3.Client {
	t.Helper()
	var httpClient *http.Client
	if e.Mode == ModeS3cond {
		httpClient = &http.Client{Transport: &requestIDChecker{t: t, next: http.DefaultTransport}}
	}
	return NewS3Client(endpoint, cred, httpClient, opts...)
}

// BackendClient talks to the backend store directly with its own key, to
// look behind s3cond's back (what was really stored) and to compare results.
func (e *Env) BackendClient() *s3.Client {
	return NewS3Client(e.Store.Endpoint, e.Store.Cred, nil)
}

// NewS3Client builds a path-style client that does not retry, so a test sees
// every error exactly as the server sent it.
func NewS3Client(endpoint string, cred Credentials, httpClient *http.Client, opts ...func(*s3.Options)) *s3.Client {
	cfg := aws.Config{
		Region:           Region,
		Credentials:      credentials.NewStaticCredentialsProvider(cred.AccessKey, cred.Secret, ""),
		RetryMaxAttempts: 1,
		// What config.LoadDefaultConfig gives users: CRC32 on every upload
		// (a trailer over TLS), checksum validation on downloads.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
	}
	if httpClient != nil {
		cfg.HTTPClient = httpClient
	}
	return s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	}}, opts...)...)
}

// CreateBucket creates a bucket through client and fails the test if it cannot.
func CreateBucket(t testing.TB, client *s3.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}

// requestIDChecker fails the test for any response without x-amz-request-id:
// the contract says every s3cond response carries one.
type requestIDChecker struct {
	t    testing.TB
	next http.RoundTripper
}

func (c *requestIDChecker) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && resp.Header.Get("X-Amz-Request-Id") == "" {
		c.t.Errorf("%s %s: %d response without x-amz-request-id", r.Method, r.URL, resp.StatusCode)
	}
	return resp, err
}
