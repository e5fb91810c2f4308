// Package testservers starts the real servers s3cond's tests run against
// (moto_server, dynalite, versitygw, Ceph RGW, SeaweedFS, s3cond itself) as child processes bound
// to 127.0.0.1 on free ports, and stops them when the test ends. A missing
// program fails the test, naming the install step; only `go test -short`
// skips it (see Require).
package testservers

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is one running child server.
type Process struct {
	Name string
	Addr string // host:port it listens on
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

// Spec describes how to start a server.
type Spec struct {
	Name string
	Path string // program to run
	// Needs is what Require checks before the start (see Require's names);
	// empty means Path itself.
	Needs string
	Args  []string // arguments; the caller already put Addr's port in them
	Env   []string // extra environment, added to os.Environ()
	Dir   string
	Addr  string        // the address to wait for
	Wait  time.Duration // how long to wait for Addr to accept; default 30 s
	// Ready, for a server whose ports are not known in advance (a Ceph
	// OSD binds what it finds free), is what it prints once it is up:
	// waited for instead of Addr, which is then empty.
	Ready string
}

// FreeAddr returns "127.0.0.1:PORT" for a free port.
func FreeAddr(t testing.TB) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

// Start runs spec, waits until its address accepts connections and registers
// a cleanup that stops it. The server's output is printed if the test fails.
func Start(t testing.TB, spec Spec) *Process {
	t.Helper()
	needs := spec.Needs
	if needs == "" {
		needs = spec.Path
	}
	Require(t, needs)
	p, err := StartProcess(spec)
	if err != nil {
		t.Fatalf("start %s: %v", spec.Name, err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", p.Name, p.Output())
		}
	})
	return p
}

// StartProcess is Start without a testing.TB; the caller must Stop it.
func StartProcess(spec Spec) (*Process, error) {
	if _, err := exec.LookPath(spec.Path); err != nil {
		return nil, fmt.Errorf("%s is needed and was not found (%s): %w", spec.Name, spec.Path, err)
	}
	out := &lockedBuffer{}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group, so Stop also ends anything the server forks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", spec.Path, err)
	}
	p := &Process{Name: spec.Name, Addr: spec.Addr, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	wait := spec.Wait
	if wait == 0 {
		wait = 30 * time.Second
	}
	waitReady := func() error { return p.waitListening(wait) }
	if spec.Addr == "" && spec.Ready != "" {
		waitReady = func() error { return p.waitPrinted(wait, spec.Ready) }
	}
	if err := waitReady(); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s did not start: %w\n%s", spec.Name, err, out.String())
	}
	return p, nil
}

func (p *Process) waitListening(wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		conn, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited early: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("no listener on %s after %s", p.Addr, wait)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *Process) waitPrinted(wait time.Duration, want string) error {
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		out, changed := p.out.snapshot()
		if strings.Contains(out, want) {
			return nil
		}
		select {
		case <-changed:
		case <-p.done:
			if strings.Contains(p.out.String(), want) {
				return nil
			}
			return fmt.Errorf("exited without printing %q: %v", want, p.err)
		case <-timeout.C:
			return fmt.Errorf("did not print %q within %s", want, wait)
		}
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after 5 s.
func (p *Process) Stop() { p.signalAndWait(syscall.SIGTERM, 5*time.Second) }

// Kill ends the process group at once with SIGKILL, as a crash would.
func (p *Process) Kill() { p.signalAndWait(syscall.SIGKILL, 5*time.Second) }

func (p *Process) signalAndWait(sig syscall.Signal, grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Pid is the child's process ID (for RSS measurements).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Output is everything the process printed so far.
func (p *Process) Output() string { return p.out.String() }

// WaitForOutput waits until the process has printed want, and returns all
// it printed so far. A child's output reaches the buffer through a pipe
// copied by a goroutine of os/exec, so a line the child wrote before it
// answered a request may not be here yet when the answer is: a test that
// looks for a log line waits for it instead of reading Output at once.
// The test fails if want is not printed within d or the process ends
// without printing it.
func (p *Process) WaitForOutput(t testing.TB, d time.Duration, want string) string {
	t.Helper()
	if err := p.waitPrinted(d, want); err != nil {
		t.Fatalf("%s %v:\n%s", p.Name, err, p.Output())
	}
	return p.Output()
}

type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on each Write
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

// snapshot returns what was written so far and a channel closed at the
// next Write.
func (b *lockedBuffer) snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.buf.String(), b.changed
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
