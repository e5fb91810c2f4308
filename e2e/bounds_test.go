package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// The attack of issue 32, findings 1 and 2, from one client address.
const (
	attackerAddr    = "127.0.0.2"
	slowForms       = 300
	idleConnections = 4100
	// signedProbes are the signed requests sent from another address
	// while the attack holds; 99 % must succeed.
	signedProbes = 100
	// maxBoundsRSS is what s3cond may grow to under the attack.
	maxBoundsRSS = 256 << 10 // KiB
)

// TestBoundsPerSourceKeepSignedClientsServed (issue 32, findings 1 and 2):
// from one address, 300 anonymous browser-form uploads trickle their
// fields and 4,100 anonymous connections each send one unsigned request
// and sit idle. Before, the forms took every unauthenticated slot (signed
// requests got 503 SlowDown) and the idle connections filled the
// connection cap (a signed client's new connection was refused). Now
// unauthenticated work and connections are capped per address, a refused
// unauthenticated request's connection is closed, and signed requests are
// verified under their own budget: from another address, signed requests
// on fresh connections succeed within their normal latency + 100 ms, and
// s3cond stays under 256 MiB.
func TestBoundsPerSourceKeepSignedClientsServed(t *testing.T) {
	raiseFileLimit(t, 2*(slowForms+idleConnections)+1024)
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "bounds")
	if _, err := e.Client(t, e.RW).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("bounds"),
		Key: aws.String("k"), Body: strings.NewReader("small object")}); err != nil {
		t.Fatal(err)
	}
	signed := signedClient()
	var normal time.Duration
	for range 30 {
		took, err := signedGet(t.Context(), signed, e.Endpoint, e.RW)
		if err != nil {
			t.Fatalf("before the attack: %v", err)
		}
		normal = max(normal, took)
	}

	attack := startAttack(t, strings.TrimPrefix(e.Endpoint, "http://"))
	if open := attack.openAfterRequest(); open > 0 {
		// Before, each stayed for the 2-minute idle timeout after its 403.
		t.Errorf("%d anonymous connections were kept open after their request was refused", open)
	}

	failed, slow := 0, 0
	var worst time.Duration
	for i := range signedProbes {
		took, err := signedGet(t.Context(), signed, e.Endpoint, e.RW)
		worst = max(worst, took)
		switch {
		case err != nil:
			failed++
			t.Logf("signed request %d: %v", i, err)
		case took > normal+100*time.Millisecond:
			slow++
			t.Logf("signed request %d took %s (normal %s)", i, took, normal)
		}
	}
	if failed > signedProbes/100 || slow > 0 {
		t.Errorf("under the attack: %d of %d signed requests failed, %d took longer than %s + 100 ms (worst %s)",
			failed, signedProbes, slow, normal, worst)
	}
	rss, err := PeakRSSKiB(e.Proxies[0].Process.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("signed requests: normal %s, worst under attack %s; s3cond peak RSS %d MiB", normal, worst, rss>>10)
	if rss > maxBoundsRSS {
		t.Errorf("s3cond's peak RSS is %d MiB, the bound is %d MiB", rss>>10, maxBoundsRSS>>10)
	}
}

// raiseFileLimit lifts the test process's soft open-file limit to at
// least n (up to the hard limit): the attack holds thousands of sockets.
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Fatalf("the open-file hard limit %d is below the %d sockets the test holds", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}

// signedClient opens a fresh connection per request, from 127.0.0.1: a
// new client's connection must get past the connection cap too.
func signedClient() *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
}

// signedGet reads bounds/k with a signed request and says how long it took.
func signedGet(ctx context.Context, client *http.Client, endpoint string, cred Credentials) (time.Duration, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/bounds/k", nil)
	if err != nil {
		return 0, err
	}
	sum := sha256.Sum256(nil)
	if _, err := SignRequest(r, cred, hex.EncodeToString(sum[:]), time.Now()); err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := client.Do(r)
	if err != nil {
		return time.Since(start), err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	took := time.Since(start)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s", resp.Status)
	}
	return took, err
}

// attack is the connections of the attacking address, closed at the
// test's end.
type attack struct {
	mu    sync.Mutex
	conns []net.Conn
	// open counts the idle connections the server kept open after
	// answering their request.
	open int
}

func (a *attack) add(c net.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conns = append(a.conns, c)
}

func (a *attack) openAfterRequest() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.open
}

// startAttack starts the slow forms, then opens the idle connections, and
// returns once every connection was dialled and every idle one answered
// (or closed).
func startAttack(t *testing.T, hostport string) *attack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &attack{}
	var trickling sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		a.mu.Lock()
		for _, c := range a.conns {
			_ = c.Close()
		}
		a.mu.Unlock()
		trickling.Wait()
	})
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attackerAddr)}, Timeout: 10 * time.Second}
	for range slowForms {
		c, err := dialer.DialContext(ctx, "tcp", hostport)
		if err != nil {
			t.Fatalf("dial a form connection: %v", err)
		}
		a.add(c)
		trickling.Add(1)
		go func() { defer trickling.Done(); trickleForm(ctx, c, hostport) }()
	}
	work := make(chan struct{})
	var idle sync.WaitGroup
	for range 64 {
		idle.Add(1)
		go func() {
			defer idle.Done()
			for range work {
				a.idleConnection(t, dialer, hostport)
			}
		}()
	}
	for range idleConnections {
		work <- struct{}{}
	}
	close(work)
	idle.Wait()
	return a
}

// trickleForm starts an anonymous POST Object form and sends its field
// header a byte at a time, a byte a second, until ctx ends.
func trickleForm(ctx context.Context, c net.Conn, hostport string) {
	head := "POST /bounds HTTP/1.1\r\nHost: " + hostport + "\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n" +
		"Content-Length: 1048576\r\n\r\n--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := c.Write([]byte("a")); err != nil {
			return
		}
	}
}

// idleConnection dials, sends one unsigned GET, reads its answer and
// leaves the connection open (as a keep-alive client would), counting it
// when the server kept it open.
func (a *attack) idleConnection(t *testing.T, dialer *net.Dialer, hostport string) {
	c, err := dialer.Dial("tcp", hostport)
	if err != nil {
		t.Errorf("dial an idle connection: %v", err)
		return
	}
	a.add(c)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /bounds/k HTTP/1.1\r\nHost: "+hostport+"\r\n\r\n"); err != nil {
		return // closed at once: its address holds its share of connections
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	_ = c.SetDeadline(time.Time{})
	if !resp.Close {
		a.mu.Lock()
		a.open++
		a.mu.Unlock()
	}
}

// TestIdleConnectionsAreShedBeforeANewOneIsRefused (issue 32, finding 2):
// with every slot of server.max_connections held by idle keep-alive
// connections, a new client was refused 503 SlowDown. Now the connection
// idle longest is closed for it, and the new client is served.
func TestIdleConnectionsAreShedBeforeANewOneIsRefused(t *testing.T) {
	const maxConnections = 32
	adminAddr := testservers.FreeAddr(t)
	e := NewEnv(t, WithProcessEnv(fmt.Sprintf("S3COND_SERVER_MAX_CONNECTIONS=%d", maxConnections),
		"S3COND_ADMIN_LISTEN="+adminAddr))
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "bounds")
	if _, err := e.Client(t, e.RW).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("bounds"),
		Key: aws.String("k"), Body: strings.NewReader("small object")}); err != nil {
		t.Fatal(err)
	}
	// Each client keeps its one connection alive after a signed GET, so
	// the cap fills with idle connections (the harness's clients' among
	// them); every further client needs one shed.
	refused := 0
	for i := range 2 * maxConnections {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
		t.Cleanup(client.CloseIdleConnections)
		if _, err := signedGet(t.Context(), client, e.Endpoint, e.RW); err != nil {
			refused++
			t.Logf("client %d: %v", i, err)
		}
	}
	if refused > 0 {
		t.Errorf("%d of %d new clients were refused while idle connections held the cap of %d",
			refused, 2*maxConnections, maxConnections)
	}
	// Operators see it: at least one idle connection per client past the cap.
	metrics := scrape(t, "http://"+adminAddr+"/metrics")
	shed := regexp.MustCompile(`(?m)^s3cond_connections_closed_total\{listener="s3",reason="idle_shed"\} (\d+)$`).FindStringSubmatch(metrics)
	if shed == nil || shed[1] == "0" {
		t.Errorf("s3cond_connections_closed_total{listener=\"s3\",reason=\"idle_shed\"}: %v, want the shed connections counted", shed)
	}
}
