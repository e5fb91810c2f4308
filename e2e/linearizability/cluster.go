package linearizability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// Lease settings short enough that leases expire within a test: a holder
// that vanished is taken over after Timeout × SkewRate = 2 s.
const (
	LeaseTimeout  = time.Second
	SkewRate      = 2
	WaitBudget    = 3 * time.Second
	PollInterval  = 100 * time.Millisecond
	testBucket    = "linear"
	clientKey     = "AKIALINEARIZABLE"
	clientSecret  = "linearizability-secret-0123456789"
	tableName     = "s3cond-leases"
	serializeEnv  = "S3COND_LEASE_SERIALIZE"
	strictMode    = "all-writes"
	defaultMode   = "conditional-only"
	startupBudget = 20 * time.Second
)

// ClusterOptions says what to start.
type ClusterOptions struct {
	// Proxies is how many s3cond processes serve the bucket (default 1).
	Proxies int
	// DynamoDB selects a shared lease table on moto, Etcd an etcd cluster;
	// otherwise each process uses its embedded lease store (then Proxies
	// should be 1).
	DynamoDB bool
	// Moto, with DynamoDB, is a running moto to create the table Table on;
	// nil starts a moto of the cluster's own.
	Moto *Moto
	// DynamoDBEndpoint, with DynamoDB, is another DynamoDB API to use
	// instead of moto (dynalite, whose calls take less of its own time).
	DynamoDBEndpoint string
	Table            string
	// Etcd, when set, is the etcd cluster every process keeps its leases in
	// (lease.store: etcd), on a key prefix of this Cluster's own.
	Etcd *testservers.EtcdCluster
	// DelayBackend routes s3cond's backend traffic through a DelayProxy.
	DelayBackend bool
	// DelayLeaseStore, with DynamoDB or a one-member Etcd, routes s3cond's
	// lease-store traffic through a DelayProxy of its own (LeaseDelay).
	DelayLeaseStore bool
	// FINHop routes s3cond's backend traffic through a FINHop (in front of
	// the delay proxy, if both): an abort's reset reaches the store as a FIN.
	FINHop bool
	// Serialize is lease.serialize ("" keeps the default, conditional-only).
	Serialize string
	// LeaseTimeout overrides lease.timeout (default LeaseTimeout). A lease
	// left held then makes a contender wait LeaseTimeout × SkewRate.
	LeaseTimeout time.Duration
	// MonotonicOffset, if set, runs proxy 0 in a Linux time namespace whose
	// monotonic and boot clocks are this far ahead of the others'.
	MonotonicOffset time.Duration
	// DefaultLease leaves lease.timeout, max_clock_skew_rate, poll_interval
	// and wait_budget to s3cond's defaults (20 s, 3, 100 ms, 10 s) instead of
	// the short test settings; LeaseTimeout is then ignored.
	DefaultLease bool
	// Env is more S3COND_* settings for every process.
	Env []string
	// Backend is the store behind s3cond (default versitygw). s3rver
	// ignores conditional headers: only s3cond's leases order the writes.
	Backend e2e.BackendKind
	// Direct starts no s3cond: the clients talk to the store itself with
	// its own key (the control that shows what the store alone does).
	Direct bool
	// ContainerHostname, when set, runs every s3cond as a container runs
	// it: PID 1 of a PID namespace of its own, with this hostname (needs
	// root). All of them, and each restarted in place, have one hostname
	// and PID.
	ContainerHostname string
	// BuildTags, when set, runs an s3cond built with these tags (the
	// negative controls' deliberately unsafe protocols).
	BuildTags string
	// ProxyBuildTags, when set, runs proxy i on a build with
	// ProxyBuildTags[i] instead (a mixed fleet: some processes of a
	// previous release, as in a rolling upgrade).
	ProxyBuildTags map[int]string
	// EditConfig, when set, changes the config every process starts with.
	EditConfig func(*e2e.Config)
	// Fault, when set, is the store: testservers.StartFaultyStore's
	// gofakes3 behind Fault, in this process; s3cond probes it
	// (conditional: auto) and serves it as the probe says.
	Fault func(http.Handler) http.Handler
}

// Cluster is a store (versitygw or s3rver), optionally a delay proxy and a
// shared lease store (moto, or an etcd cluster), and s3cond processes in
// front of them.
type Cluster struct {
	// Store is the backend store; Backend is the same store when it is
	// versitygw (nil otherwise), for the tests that stop and restart it.
	Store   e2e.Store
	Backend *testservers.VersityGW
	Delay   *testservers.DelayProxy // nil unless DelayBackend
	FIN     *testservers.FINHop     // nil unless FINHop
	// LeaseDelay is the DelayProxy before moto or etcd; nil unless
	// DelayLeaseStore.
	LeaseDelay *testservers.DelayProxy
	// AdminAddrs[i] is proxy i's admin listener (its /metrics).
	AdminAddrs []string
	Moto       *Moto                    // nil unless DynamoDB
	Etcd       *testservers.EtcdCluster // nil unless ClusterOptions.Etcd
	Proxies    []*testservers.S3cond
	// DataDirs[i] is proxy i's data_dir (its embedded lease file is there).
	DataDirs []string
	Config   e2e.Config
	Cred     e2e.Credentials
	Bucket   string

	env []string
	bin string // the s3cond binary; "" for the module's own build
	// containerHostname is ClusterOptions.ContainerHostname.
	containerHostname string
}

// faultyStore is the Store.Kind of a ClusterOptions.Fault store.
const faultyStore e2e.BackendKind = "faulty"

// NewCluster starts everything and creates the bucket.
func NewCluster(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	if opts.Proxies == 0 {
		opts.Proxies = 1
	}
	c := &Cluster{Cred: e2e.Credentials{AccessKey: clientKey, Secret: clientSecret}, Bucket: testBucket,
		containerHostname: opts.ContainerHostname}
	if opts.Fault != nil {
		c.Store = e2e.Store{Kind: faultyStore, Endpoint: testservers.StartFaultyStore(t, opts.Fault), Cred: e2e.Credentials{AccessKey: "faultykey", Secret: "faultysecret"}}
		c.env = append(c.env, "S3COND_BACKEND_PROBE_BUCKET="+testservers.FaultyStoreBucket)
	} else {
		c.Store, c.Backend = e2e.StartStore(t, opts.Backend)
	}
	backendEndpoint := c.Store.Endpoint
	if opts.DelayBackend {
		c.Delay = testservers.StartDelayProxy(t, strings.TrimPrefix(c.Store.Endpoint, "http://"))
		backendEndpoint = c.Delay.Endpoint()
	}
	if opts.FINHop {
		c.FIN = testservers.StartFINHop(t, strings.TrimPrefix(backendEndpoint, "http://"))
		backendEndpoint = c.FIN.Endpoint()
	}
	c.Config = e2e.Config{
		Server: e2e.ServerConfig{Region: e2e.Region, MaxSkew: "15m"},
		Backend: e2e.BackendConfig{Type: "s3", Endpoint: backendEndpoint, Region: e2e.Region, Addressing: "path",
			Credentials: e2e.CredentialsConfig{Source: "static", AccessKeyID: c.Store.Cred.AccessKey, SecretAccessKey: c.Store.Cred.Secret},
			Checksums:   "verify-only", Conditional: "lease"},
		Keys: []e2e.KeyConfig{{AccessKeyID: clientKey, Secret: clientSecret, Buckets: []string{"*"}, Access: "read-write"}},
		Lease: e2e.LeaseConfig{Store: "embedded", Timeout: LeaseTimeout.String(), MaxClockSkewRate: SkewRate,
			PollInterval: PollInterval.String(), TTL: "1h", WaitBudget: WaitBudget.String()},
		Log: e2e.LogConfig{Level: "info", Format: "console"},
	}
	if opts.Fault != nil {
		c.Config.Backend.Conditional = "auto"
	}
	if opts.LeaseTimeout != 0 {
		c.Config.Lease.Timeout = opts.LeaseTimeout.String()
	}
	if opts.DefaultLease {
		c.Config.Lease.Timeout, c.Config.Lease.MaxClockSkewRate = "", 0
		c.Config.Lease.PollInterval, c.Config.Lease.WaitBudget = "", ""
	}
	if opts.EditConfig != nil {
		opts.EditConfig(&c.Config)
	}
	c.env = append(c.env, opts.Env...)
	if opts.BuildTags != "" {
		c.bin = testservers.BuildS3condTagged(t, opts.BuildTags)
	}
	if opts.Serialize != "" {
		// Through the environment: the e2e harness's Config has no field for
		// lease.serialize, and every key has an S3COND_* override.
		c.env = append(c.env, serializeEnv+"="+opts.Serialize)
	}
	if opts.DynamoDB {
		c.useDynamoDB(t, opts)
	}
	if opts.Etcd != nil {
		c.useEtcd(t, opts)
	}
	if opts.Direct {
		c.Cred, opts.Proxies = c.Store.Cred, 0
	}
	c.startProxies(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Client(0, 10*time.Second).CreateBucket(ctx, bucketInput(c.Bucket)); err != nil {
		t.Fatalf("create bucket %s: %v", c.Bucket, err)
	}
	return c
}

// useDynamoDB points the cluster's lease store at a DynamoDB table on
// moto (opts.Moto, or one of its own), behind a delay proxy if asked, and
// creates the table.
func (c *Cluster) useDynamoDB(t testing.TB, opts ClusterOptions) {
	leaseEndpoint := opts.DynamoDBEndpoint
	if leaseEndpoint == "" {
		c.Moto = opts.Moto
		if c.Moto == nil {
			c.Moto = StartRestartableMoto(t)
		}
		leaseEndpoint = c.Moto.Endpoint
	}
	table := opts.Table
	if table == "" {
		table = tableName
	}
	if opts.DelayLeaseStore {
		c.LeaseDelay = testservers.StartDelayProxy(t, strings.TrimPrefix(leaseEndpoint, "http://"))
		leaseEndpoint = c.LeaseDelay.Endpoint()
	}
	c.Config.Lease.Store = "dynamodb"
	c.Config.Lease.DynamoDB = e2e.DynamoDBConfig{Table: table, Region: e2e.Region, Endpoint: leaseEndpoint,
		Credentials: e2e.CredentialsConfig{Source: "static", AccessKeyID: "testing", SecretAccessKey: "testing"}}
	c.CreateLeaseTable(t)
}

// startProxies starts opts.Proxies s3cond processes, the first with
// opts.MonotonicOffset, each from its own build where opts.ProxyBuildTags
// says so.
func (c *Cluster) startProxies(t testing.TB, opts ClusterOptions) {
	for i := 0; i < opts.Proxies; i++ {
		var offset time.Duration
		if i == 0 {
			offset = opts.MonotonicOffset
		}
		bin := c.bin
		if tags, ok := opts.ProxyBuildTags[i]; ok && tags != "" {
			bin = testservers.BuildS3condTagged(t, tags)
		}
		c.Proxies = append(c.Proxies, c.startProxy(t, offset, bin))
	}
}

// startProxy starts one s3cond; bin is its binary ("" for the module's
// own build).
func (c *Cluster) startProxy(t testing.TB, monotonicOffset time.Duration, bin string) *testservers.S3cond {
	t.Helper()
	cfg := c.Config
	cfg.Server.Listen = testservers.FreeAddr(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	c.DataDirs = append(c.DataDirs, cfg.DataDir)
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	// Each process needs its own admin listener (its default is a fixed
	// port); the e2e harness's Config has no admin section.
	admin := testservers.FreeAddr(t)
	c.AdminAddrs = append(c.AdminAddrs, admin)
	env := append(slices.Clone(c.env), "S3COND_ADMIN_LISTEN="+admin)
	if c.containerHostname != "" {
		if bin == "" {
			bin = testservers.BuildS3cond(t)
		}
		return testservers.StartS3condBinaryAsPID1(t, bin, c.containerHostname, text, env...)
	}
	if monotonicOffset == 0 && bin != "" {
		return testservers.StartS3condBinary(t, bin, text, env...)
	}
	if monotonicOffset == 0 {
		return testservers.StartS3cond(t, text, env...)
	}
	return startS3condInTimeNamespace(t, text, cfg.Server.Listen, env, monotonicOffset)
}

// startS3condInTimeNamespace runs s3cond under `unshare --time`, whose
// CLOCK_MONOTONIC and CLOCK_BOOTTIME are offset from everyone else's. The
// wall clock cannot be offset this way (Linux time namespaces do not cover
// CLOCK_REALTIME), nor can a clock be made to run at another rate.
// The returned process cannot Restart.
func startS3condInTimeNamespace(t testing.TB, configYAML, listen string, env []string, offset time.Duration) *testservers.S3cond {
	t.Helper()
	dir := t.TempDir()
	configPath := filepath.Join(dir, "s3cond.yaml")
	if err := os.WriteFile(configPath, []byte(configYAML), 0o600); err != nil {
		t.Fatalf("write s3cond config: %v", err)
	}
	secs := strconv.Itoa(int(offset.Seconds()))
	args := []string{"--user", "--map-root-user", "--time", "--fork", "--monotonic", secs, "--boottime", secs,
		testservers.BuildS3cond(t), "serve", "--config", configPath}
	proc := testservers.Start(t, testservers.Spec{Name: "s3cond (time namespace)", Path: "unshare", Args: args,
		Env: env, Dir: dir, Addr: listen, Wait: startupBudget})
	return &testservers.S3cond{Endpoint: "http://" + listen, Addr: listen, ConfigPath: configPath, Dir: dir, Process: proc}
}

// CreateLeaseTable runs `s3cond table create` against moto (again, after a
// restart lost the table).
func (c *Cluster) CreateLeaseTable(t testing.TB) {
	t.Helper()
	cfg := c.Config
	cfg.Server.Listen = "127.0.0.1:1" // not used by `table create`
	dir, path := e2e.WriteConfigFile(t, cfg)
	// Retried: a moto that just started may still fail its first requests
	// on a loaded machine.
	var out []byte
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		cmd := exec.Command(testservers.BuildS3cond(t), "table", "create", "--config", path)
		cmd.Dir = dir
		out, err = cmd.CombinedOutput()
		if err == nil {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("s3cond table create: %v\n%s", err, out)
}

// etcdRequestTimeout is lease.etcd.request_timeout in these tests: short,
// so a cluster without quorum answers 503 soon, yet safe on a busy machine.
const etcdRequestTimeout = 2 * time.Second

var etcdPrefixSeq atomic.Int64

// useEtcd sets lease.store: etcd through S3COND_* variables (the e2e
// harness's Config has no etcd section; every key has a variable), behind
// a delay proxy if asked (a one-member cluster only).
func (c *Cluster) useEtcd(t testing.TB, opts ClusterOptions) {
	etcd := opts.Etcd
	c.Etcd = etcd
	endpoints := etcd.Endpoints()
	if opts.DelayLeaseStore {
		if len(endpoints) != 1 {
			t.Fatalf("DelayLeaseStore with etcd needs a one-member cluster, not %d", len(endpoints))
		}
		c.LeaseDelay = testservers.StartDelayProxy(t, strings.TrimPrefix(endpoints[0], "http://"))
		endpoints = []string{c.LeaseDelay.Endpoint()}
	}
	c.env = append(c.env,
		"S3COND_LEASE_STORE=etcd",
		"S3COND_LEASE_ETCD_ENDPOINTS="+strings.Join(endpoints, ","),
		fmt.Sprintf("S3COND_LEASE_ETCD_PREFIX=s3cond-e2e/%d/%d/", os.Getpid(), etcdPrefixSeq.Add(1)),
		"S3COND_LEASE_ETCD_REQUEST_TIMEOUT="+etcdRequestTimeout.String())
}

// Endpoints lists the s3cond endpoints (the store's, for a Direct cluster).
func (c *Cluster) Endpoints() []string {
	if len(c.Proxies) == 0 {
		return []string{c.Store.Endpoint}
	}
	out := make([]string, len(c.Proxies))
	for i, p := range c.Proxies {
		out[i] = p.Endpoint
	}
	return out
}

// KillAndRestart SIGKILLs proxy i, waits pause, and starts it again on the
// same address, configuration and data_dir.
func (c *Cluster) KillAndRestart(t testing.TB, i int, pause time.Duration) {
	t.Helper()
	c.Proxies[i].Process.Kill()
	time.Sleep(pause)
	c.Proxies[i].Restart(t)
}
