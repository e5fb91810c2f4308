package testservers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// S3cond is a running s3cond process.
type S3cond struct {
	Endpoint   string // http://127.0.0.1:PORT
	Addr       string
	ConfigPath string // empty when it runs on its embedded defaults
	Dir        string // its working directory (holds ./s3cond-data by default)
	Process    *Process
	bin        string
	env        []string
	// wrap, when set, is a command line s3cond runs under (namespace.go).
	wrap []string
}

// s3condBuild builds the binary once per test binary: every test that starts
// s3cond shares it, and the build takes seconds even with a warm cache.
var s3condBuild struct {
	once sync.Once
	path string
	err  error
}

// BuildS3cond returns the path of an s3cond binary built from this module's
// ./cmd/s3cond (or $S3COND_BIN when set, to test a prebuilt binary).
func BuildS3cond(t testing.TB) string {
	t.Helper()
	s3condBuild.once.Do(func() {
		if p := os.Getenv("S3COND_BIN"); p != "" {
			s3condBuild.path = p
			return
		}
		s3condBuild.path, s3condBuild.err = buildS3cond()
	})
	if s3condBuild.err != nil {
		t.Fatalf("build s3cond: %v", s3condBuild.err)
	}
	return s3condBuild.path
}

// s3condTaggedBuilds holds the binaries built with extra build tags, by tag
// list.
var s3condTaggedBuilds struct {
	mu    sync.Mutex
	paths map[string]string
}

// BuildS3condTagged builds ./cmd/s3cond with the given build tags (once per
// test binary and tag list), for tests that run a deliberately altered
// protocol, such as the linearizability suite's negative control.
func BuildS3condTagged(t testing.TB, tags string) string {
	t.Helper()
	s3condTaggedBuilds.mu.Lock()
	defer s3condTaggedBuilds.mu.Unlock()
	if p, ok := s3condTaggedBuilds.paths[tags]; ok {
		return p
	}
	p, err := buildS3cond("-tags", tags)
	if err != nil {
		t.Fatalf("build s3cond with tags %q: %v", tags, err)
	}
	if s3condTaggedBuilds.paths == nil {
		s3condTaggedBuilds.paths = map[string]string{}
	}
	s3condTaggedBuilds.paths[tags] = p
	return p
}

func buildS3cond(flags ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	// Not t.TempDir: the binary outlives the test that happened to build it.
	// One small file per test binary in the OS temp dir is left behind.
	dir, err := os.MkdirTemp("", "s3cond-e2e-bin-")
	if err != nil {
		return "", fmt.Errorf("make build dir: %w", err)
	}
	bin := filepath.Join(dir, "s3cond")
	args := append(append([]string{"build"}, flags...), "-o", bin, "./cmd/s3cond")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/s3cond in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the s3cond module (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod), nil
}

// StartS3cond writes configYAML to a file in a fresh working directory and
// runs `s3cond serve --config FILE` there. It waits for server.listen from
// the config; if the config leaves it empty, it picks a free port and passes
// it as S3COND_SERVER_LISTEN.
func StartS3cond(t testing.TB, configYAML string, env ...string) *S3cond {
	t.Helper()
	return startS3condUnder(t, BuildS3cond(t), nil, configYAML, env...)
}

// StartS3condBinary is StartS3cond with the s3cond binary bin (from
// BuildS3condTagged).
func StartS3condBinary(t testing.TB, bin, configYAML string, env ...string) *S3cond {
	t.Helper()
	return startS3condUnder(t, bin, nil, configYAML, env...)
}

func startS3condUnder(t testing.TB, bin string, wrap []string, configYAML string, env ...string) *S3cond {
	t.Helper()
	// Several processes run side by side: each takes a free admin port
	// (the default 127.0.0.1:9001 would let only one start). The caller's
	// env comes after, so a test may still choose one.
	env = append([]string{"S3COND_ADMIN_LISTEN=127.0.0.1:0"}, env...)
	listen, err := listenFromConfig(configYAML)
	if err != nil {
		t.Fatalf("s3cond config: %v", err)
	}
	dir := t.TempDir()
	configPath := filepath.Join(dir, "s3cond.yaml")
	if err := os.WriteFile(configPath, []byte(configYAML), 0o600); err != nil {
		t.Fatalf("write s3cond config: %v", err)
	}
	if listen == "" {
		listen = FreeAddr(t)
		env = append(env, "S3COND_SERVER_LISTEN="+listen)
	}
	s := &S3cond{Addr: listen, Endpoint: "http://" + listen, ConfigPath: configPath, Dir: dir,
		bin: bin, env: env, wrap: wrap}
	s.Process = s.start(t)
	return s
}

// StartS3condDefaults runs `s3cond` with no arguments (its embedded
// development defaults) in a fresh working directory, on a free port.
func StartS3condDefaults(t testing.TB) *S3cond {
	t.Helper()
	listen := FreeAddr(t)
	s := &S3cond{Addr: listen, Endpoint: "http://" + listen, Dir: t.TempDir(), bin: BuildS3cond(t),
		env: []string{"S3COND_SERVER_LISTEN=" + listen, "S3COND_ADMIN_LISTEN=127.0.0.1:0"}}
	s.Process = s.start(t)
	return s
}

func (s *S3cond) start(t testing.TB) *Process {
	t.Helper()
	var args []string
	if s.ConfigPath != "" {
		args = []string{"serve", "--config", s.ConfigPath}
	}
	path := s.bin
	if len(s.wrap) > 0 {
		path, args = s.wrap[0], append(append(slices.Clone(s.wrap[1:]), s.bin), args...)
	}
	return Start(t, Spec{Name: "s3cond", Path: path, Args: args, Env: s.env, Dir: s.Dir, Addr: s.Addr,
		Wait: s3condStartWait})
}

// s3condStartWait covers s3cond's start-up under `conditional: auto`: it
// listens only after probing the store, which may take the probe's whole
// bound (internal/probe's DefaultTimeout, 60 s) and its cleanup (at most
// 20 s) on a store whose losing writers answer slowly (SeaweedFS: about
// 20 s on a loaded machine). internal/probe's tests import this package,
// so the bound is restated, not imported.
const s3condStartWait = 90 * time.Second

// Restart stops s3cond (if it still runs) and starts it again with the same
// configuration, address and working directory.
func (s *S3cond) Restart(t testing.TB) {
	t.Helper()
	s.Process.Stop()
	s.Process = s.start(t)
}

// Command runs a one-shot s3cond subcommand (for example `table create
// --config FILE`) in s's working directory and returns its output.
func (s *S3cond) Command(t testing.TB, args ...string) string {
	t.Helper()
	return RunS3condCommand(t, s.Dir, s.env, args...)
}

// RunS3condCommand runs `s3cond ARGS...` in dir and fails the test if it
// exits non-zero.
func RunS3condCommand(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(BuildS3cond(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("s3cond %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func listenFromConfig(configYAML string) (string, error) {
	var doc struct {
		Server struct {
			Listen string `yaml:"listen"`
		} `yaml:"server"`
	}
	if err := yaml.Unmarshal([]byte(configYAML), &doc); err != nil {
		return "", fmt.Errorf("parse YAML: %w", err)
	}
	return doc.Server.Listen, nil
}
