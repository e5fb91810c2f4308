package testservers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Raft timings of the test clusters: a dead leader is replaced within about
// a second. Slower than etcd's tightest settings, so a busy 2-core machine
// does not trigger elections by itself.
const (
	etcdHeartbeat       = 100 * time.Millisecond
	etcdElectionTimeout = time.Second
)

// EtcdPath is the etcd server program: $S3COND_ETCD, else etcd on PATH
// (Debian's etcd-server package).
func EtcdPath() string {
	if p := os.Getenv("S3COND_ETCD"); p != "" {
		return p
	}
	return "etcd"
}

// EtcdMember is one member of an EtcdCluster: a real etcd process that a
// test can kill, stop, freeze and start again with its data.
type EtcdMember struct {
	Name      string
	ClientURL string // http://127.0.0.1:PORT
	PeerURL   string
	DataDir   string
	spec      Spec

	mu      sync.Mutex // guards process and frozen: faults run on their own goroutines
	process *Process
	frozen  bool
}

// EtcdCluster is a three-member etcd cluster on 127.0.0.1.
type EtcdCluster struct {
	Members []*EtcdMember
	certs   *EtcdCerts // nil: plain HTTP
}

// StartEtcdCluster starts a three-member cluster on free ports, waits until
// it has a leader and stops it when the test ends. A missing etcd fails the
// test.
func StartEtcdCluster(t testing.TB) *EtcdCluster {
	t.Helper()
	return StartEtcdClusterOf(t, 3)
}

// StartEtcdClusterOf starts a cluster of n members.
func StartEtcdClusterOf(t testing.TB, n int) *EtcdCluster {
	t.Helper()
	return startEtcdCluster(t, n, nil)
}

// StartEtcdClusterWithFlags starts a cluster of n members, each also given
// flags (for example --auth-token-ttl).
func StartEtcdClusterWithFlags(t testing.TB, n int, flags ...string) *EtcdCluster {
	t.Helper()
	return startEtcdCluster(t, n, nil, flags...)
}

func startEtcdCluster(t testing.TB, n int, certs *EtcdCerts, flags ...string) *EtcdCluster {
	t.Helper()
	c := &EtcdCluster{certs: certs}
	clientScheme := "http://"
	if certs != nil {
		clientScheme = "https://"
	}
	var initial []string
	addrs := distinctFreeAddrs(t, 2*n)
	for i := range n {
		m := &EtcdMember{
			Name:      fmt.Sprintf("m%d", i),
			ClientURL: clientScheme + addrs[2*i],
			PeerURL:   "http://" + addrs[2*i+1],
			DataDir:   filepath.Join(t.TempDir(), "etcd"),
		}
		initial = append(initial, m.Name+"="+m.PeerURL)
		c.Members = append(c.Members, m)
	}
	// One token per cluster, so members of two test clusters that happen
	// to reach each other's old ports refuse to talk.
	token := fmt.Sprintf("s3cond-test-%d", time.Now().UnixNano())
	for _, m := range c.Members {
		m.spec = etcdSpec(m, strings.Join(initial, ","), token, certs)
		m.spec.Args = append(m.spec.Args, flags...)
	}
	// All at once: a member waits for the others before it elects a leader.
	errs := make(chan error, n)
	for _, m := range c.Members {
		go func() { errs <- m.startProcess() }()
	}
	for range n {
		if err := <-errs; err != nil {
			c.stopAll()
			t.Fatalf("start etcd: %v", err)
		}
	}
	t.Cleanup(func() {
		c.stopAll()
		if t.Failed() {
			for _, m := range c.Members {
				t.Logf("etcd %s output (last 4 KiB):\n%s", m.Name, tail(m.output(), 4096))
			}
		}
	})
	if err := c.WaitLeader(30 * time.Second); err != nil {
		t.Fatalf("etcd cluster: %v", err)
	}
	return c
}

// distinctFreeAddrs returns n free 127.0.0.1 addresses, all different:
// each is held open until all are found.
func distinctFreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

func etcdSpec(m *EtcdMember, initialCluster, token string, certs *EtcdCerts) Spec {
	args := []string{
		"--name", m.Name,
		"--data-dir", m.DataDir,
		"--listen-client-urls", m.ClientURL,
		"--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", m.PeerURL,
		"--initial-advertise-peer-urls", m.PeerURL,
		"--initial-cluster", initialCluster,
		"--initial-cluster-state", "new",
		"--initial-cluster-token", token,
		"--heartbeat-interval", strconv.Itoa(int(etcdHeartbeat.Milliseconds())),
		"--election-timeout", strconv.Itoa(int(etcdElectionTimeout.Milliseconds())),
		"--logger", "zap", "--log-level", "warn",
	}
	if certs != nil {
		args = append(args, "--cert-file", certs.ServerCert, "--key-file", certs.ServerKey,
			"--client-cert-auth", "--trusted-ca-file", certs.CA)
	}
	_, addr, _ := strings.Cut(m.ClientURL, "://")
	return Spec{Name: "etcd " + m.Name, Path: EtcdPath(), Args: args, Addr: addr, Wait: 30 * time.Second}
}

func (m *EtcdMember) startProcess() error {
	p, err := StartProcess(m.spec)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.process, m.frozen = p, false
	return nil
}

func (m *EtcdMember) current() *Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.process
}

func (m *EtcdMember) output() string {
	if p := m.current(); p != nil {
		return p.Output()
	}
	return ""
}

// Endpoints are the members' client URLs.
func (c *EtcdCluster) Endpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.ClientURL
	}
	return out
}

// clientConfig is how the harness's own clients reach the cluster.
func (c *EtcdCluster) clientConfig(dialTimeout time.Duration) clientv3.Config {
	cfg := clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: dialTimeout, Logger: zap.NewNop()}
	if c.certs != nil {
		cfg.TLS = c.certs.clientTLS
	}
	return cfg
}

// Client returns a client of the whole cluster, closed when the test ends.
func (c *EtcdCluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(c.clientConfig(5 * time.Second))
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// Leader returns the member that is leader now, by asking each running
// member for its status.
func (c *EtcdCluster) Leader(ctx context.Context) (*EtcdMember, error) {
	client, err := clientv3.New(c.clientConfig(2 * time.Second))
	if err != nil {
		return nil, err
	}
	defer client.Close()
	var errs []error
	for _, m := range c.Members {
		if !m.Answering() {
			continue
		}
		statusCtx, cancel := context.WithTimeout(ctx, time.Second)
		status, err := client.Status(statusCtx, m.ClientURL)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
			continue
		}
		if status.Leader != 0 && status.Leader == status.Header.MemberId {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no member is leader: %w", errors.Join(errs...))
}

// WaitLeader waits until some member is leader and a linearizable read
// through the whole cluster succeeds.
func (c *EtcdCluster) WaitLeader(within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		_, err := c.Leader(ctx)
		if err == nil {
			err = c.readOnce(ctx)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no leader after %s: %w", within, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *EtcdCluster) readOnce(ctx context.Context) error {
	client, err := clientv3.New(c.clientConfig(2 * time.Second))
	if err != nil {
		return err
	}
	defer client.Close()
	readCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = client.Get(clientv3.WithRequireLeader(readCtx), "s3cond-test-probe")
	return err
}

// Kill SIGKILLs the member, as a crash would.
func (m *EtcdMember) Kill() {
	m.Thaw()
	if p := m.current(); p != nil {
		p.Kill()
	}
}

// Stop ends the member with SIGTERM, as an orderly shutdown would.
func (m *EtcdMember) Stop() {
	m.Thaw()
	if p := m.current(); p != nil {
		p.Stop()
	}
}

// Start runs a stopped or killed member again on its data, addresses and
// name; it rejoins the cluster.
func (m *EtcdMember) Start(t testing.TB) {
	t.Helper()
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
}

// Restart is Start for goroutines other than the test's own.
func (m *EtcdMember) Restart() error {
	if m.Running() {
		return fmt.Errorf("etcd %s is still running", m.Name)
	}
	if err := m.startProcess(); err != nil {
		return fmt.Errorf("restart etcd %s: %w", m.Name, err)
	}
	return nil
}

// Freeze SIGSTOPs the member: it keeps its sockets but answers nothing,
// as a machine that hangs.
func (m *EtcdMember) Freeze() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.process != nil && !m.frozen && !exited(m.process) {
		_ = syscall.Kill(-m.process.Pid(), syscall.SIGSTOP)
		m.frozen = true
	}
}

// Thaw SIGCONTs the member if it is frozen.
func (m *EtcdMember) Thaw() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.frozen {
		_ = syscall.Kill(-m.process.Pid(), syscall.SIGCONT)
		m.frozen = false
	}
}

// Running reports whether the member's process is alive (frozen or not).
func (m *EtcdMember) Running() bool {
	p := m.current()
	return p != nil && !exited(p)
}

// Answering reports whether the member runs and is not frozen.
func (m *EtcdMember) Answering() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.process != nil && !m.frozen && !exited(m.process)
}

func exited(p *Process) bool {
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

// Follower returns a member that runs and is not the leader.
func (c *EtcdCluster) Follower(ctx context.Context) (*EtcdMember, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range c.Members {
		if m != leader && m.Answering() {
			return m, nil
		}
	}
	return nil, errors.New("no running follower")
}

// Freeze SIGSTOPs every member: the cluster has no quorum until Thaw.
func (c *EtcdCluster) Freeze() {
	for _, m := range c.Members {
		m.Freeze()
	}
}

// Thaw SIGCONTs every frozen member.
func (c *EtcdCluster) Thaw() {
	for _, m := range c.Members {
		m.Thaw()
	}
}

func (c *EtcdCluster) stopAll() {
	for _, m := range c.Members {
		m.Stop()
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
