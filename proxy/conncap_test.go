package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/frontconn"
)

// getOn sends an unsigned GET on conn and reads the answer.
func getOn(t *testing.T, conn net.Conn, reader *bufio.Reader) (*http.Response, string) {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /"+bucketName+"/k HTTP/1.1\r\nHost: s3cond\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// A connection past server.max_connections is answered S3's 503 SlowDown
// and closed (issue 23, item 2: nothing capped connections).
func TestConnectionPastTheCapIsToldToSlowDown(t *testing.T) {
	front := httptest.NewUnstartedServer(formProxy(Options{}))
	front.Listener = frontconn.NewCappedListener(front.Listener, frontconn.Limits{MaxConnections: 1})
	front.Config.ConnContext = frontconn.NewContext
	front.Start()
	defer front.Close()
	host := strings.TrimPrefix(front.URL, "http://")

	first, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// The first connection holds the one slot, still sending its header
	// (not idle, so nothing sheds it); the listener accepts in order.
	second, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	reader := bufio.NewReader(second)
	resp, body := getOn(t, second, reader)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "<Code>SlowDown</Code>") || !resp.Close {
		t.Fatalf("past the cap: %d close=%v %s, want 503 SlowDown and Connection: close", resp.StatusCode, resp.Close, body)
	}
	if _, err := reader.ReadByte(); err != io.EOF {
		t.Fatalf("the refused connection stayed open: %v", err)
	}
}
