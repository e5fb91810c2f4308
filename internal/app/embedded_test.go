package app

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// headOnStore asks the embedded store itself (not s3cond) for an object.
func headOnStore(t *testing.T, a *App, path string) int {
	t.Helper()
	resp, err := a.Embedded.HTTPClient().Head(a.BackendEndpoint + path)
	if err != nil {
		t.Fatalf("HEAD %s on the embedded store: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// An upload s3cond aborts before its final byte (here: its Content-MD5
// does not match) must leave nothing in the in-process store.
func TestEmbeddedStoreKeepsNothingOfAnAbortedUpload(t *testing.T) {
	a := build(t, devConfig(t))
	front := httptest.NewServer(a.Handler)
	defer front.Close()
	body := bytes.Repeat([]byte("a"), 300<<10) // streamed, not buffered: over 64 KiB
	wrong := md5.Sum([]byte("something else"))
	header := http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(wrong[:])}}
	status, answer := do(t, signed(t, http.MethodPut, front.URL+"/aborted-bucket/k", bytes.NewReader(body), header))
	if status != http.StatusBadRequest || !strings.Contains(answer, "BadDigest") {
		t.Fatalf("PUT with a wrong Content-MD5: %d %s", status, answer)
	}
	if got := headOnStore(t, a, "/aborted-bucket/k"); got != http.StatusNotFound {
		t.Fatalf("the embedded store answers %d for the aborted upload, want 404", got)
	}
	// The same upload, correct, is stored: the store was reachable all along.
	good := md5.Sum(body)
	header.Set("Content-Md5", base64.StdEncoding.EncodeToString(good[:]))
	if status, answer := do(t, signed(t, http.MethodPut, front.URL+"/aborted-bucket/k", bytes.NewReader(body), header)); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, answer)
	}
	if got := headOnStore(t, a, "/aborted-bucket/k"); got != http.StatusOK {
		t.Fatalf("the embedded store answers %d for the stored upload", got)
	}
}

// A client that stops sending its body gets 400 RequestTimeout once
// server.body_idle_timeout passes, and the store keeps nothing.
func TestEmbeddedStoreKeepsNothingOfAStalledUpload(t *testing.T) {
	cfg := devConfig(t)
	cfg.Server.BodyIdleTimeout = 300 * time.Millisecond
	a := build(t, cfg)
	front := httptest.NewServer(a.Handler)
	defer front.Close()

	req := signed(t, http.MethodPut, front.URL+"/stalled-bucket/k", nil, http.Header{"If-None-Match": {"*"}})
	req.ContentLength = 200 << 10
	req.Header.Set("Content-Length", "204800")
	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var head bytes.Buffer
	head.WriteString("PUT /stalled-bucket/k HTTP/1.1\r\nHost: " + req.Host + "\r\n")
	_ = req.Header.Write(&head)
	head.WriteString("\r\n")
	head.Write(bytes.Repeat([]byte("s"), 100<<10)) // half the body, then nothing
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the stalled upload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("stalled upload: status %d, want 400 RequestTimeout", resp.StatusCode)
	}
	if got := headOnStore(t, a, "/stalled-bucket/k"); got != http.StatusNotFound {
		t.Fatalf("the embedded store answers %d for the stalled upload, want 404", got)
	}
}
