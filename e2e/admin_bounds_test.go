package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// adminHeaderFlood is the connections of finding 3's header attack, and
// maxAdminFloodRSS what s3cond may grow to under it (17d57f2: 264 MiB; now
// about 35 MiB).
const (
	adminHeaderFlood = 300
	maxAdminFloodRSS = 128 << 10 // KiB
)

// TestAdminListenerIsBounded (issue 32, finding 3): the admin listener had
// no bounds. 300 connections sending ~1 MiB header blocks grew s3cond by
// over 500 MiB, and an idle admin connection was never closed. Now it has
// the S3 port's kinds of bound: a 16 KiB header block (net/http's 431,
// then closed), a connection cap, and admin.idle_timeout, short here.
func TestAdminListenerIsBounded(t *testing.T) {
	raiseFileLimit(t, 4*adminHeaderFlood+1024)
	adminAddr := testservers.FreeAddr(t)
	e := NewEnv(t, WithProcessEnv("S3COND_ADMIN_LISTEN="+adminAddr, "S3COND_ADMIN_IDLE_TIMEOUT=300ms"))
	e.RequireProxy(t)

	idle, err := net.Dial("tcp", adminAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	reader := bufio.NewReader(idle)
	if _, err := io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(reader, nil)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %v %v, want 200 on a keep-alive connection", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	// The event: the server closes the idle connection. The deadline only
	// stops a wait that would never end (before, it did not).
	_ = idle.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := reader.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("an idle admin connection after admin.idle_timeout (300ms): %v, want it closed", err)
	}

	floodAdminHeaders(t, adminAddr)
	rss, err := PeakRSSKiB(e.Proxies[0].Process.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("s3cond peak RSS after %d admin connections of 1 MiB headers: %d MiB", adminHeaderFlood, rss>>10)
	if rss > maxAdminFloodRSS {
		t.Errorf("s3cond's peak RSS is %d MiB, the bound is %d MiB", rss>>10, maxAdminFloodRSS>>10)
	}
	// The flood's connections are closed by now, but the server frees
	// their slots only as it notices each close; a request in between meets
	// a full admin.max_connections and gets its 503 (the cap at work). The
	// listener must answer again once they are gone.
	testkit.Within(t, 10*time.Second, "the admin listener to answer after the flood", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+adminAddr+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /healthz: %s", resp.Status)
		}
		return nil
	})
}

// floodAdminHeaders opens adminHeaderFlood connections at once, each
// sending a header block of about 1 MiB, unfinished, and holds them until
// the server answers or closes them (or 5 s pass, for a server that never
// does: before, it held them all).
func floodAdminHeaders(t *testing.T, adminAddr string) {
	t.Helper()
	line := "GET /healthz HTTP/1.1\r\nHost: admin\r\nX-Filler: " + strings.Repeat("a", 1<<20)
	var wg sync.WaitGroup
	for range adminHeaderFlood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", adminAddr)
			if err != nil {
				return // the kernel's accept queue is full: refused, as it should be
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(c, line)
			_, _ = io.Copy(io.Discard, c)
		}()
	}
	wg.Wait()
}
