package tlsreload

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/testkit"
)

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// servedName connects to addr and returns the common name of the
// certificate the server presented.
func servedName(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // the test checks the name itself
	if err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

func TestSIGHUPSwapsTheCertificateAndABadPairKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	testkit.WriteSelfSigned(t, certFile, keyFile, "first.example")
	r, err := New(certFile, keyFile, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	// Not httptest's StartTLS: it would add its own certificate, which wins
	// over GetCertificate for clients that send no server name.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	addr := ln.Addr().String()
	if got := servedName(t, addr); got != "first.example" {
		t.Fatalf("served %q, want first.example", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hangups := make(chan os.Signal)
	go r.ReloadOn(ctx, hangups)

	testkit.WriteSelfSigned(t, certFile, keyFile, "second.example")
	hangups <- syscall.SIGHUP
	hangups <- syscall.SIGHUP // the first was handled once the second is taken
	if got := servedName(t, addr); got != "second.example" {
		t.Fatalf("after a reload served %q, want second.example", got)
	}

	// A half-written renewal: the certificate no longer matches the key.
	testkit.WriteSelfSigned(t, certFile, filepath.Join(dir, "other-key.pem"), "third.example")
	if err := r.Reload(); err == nil {
		t.Fatal("Reload accepted a certificate whose key is another")
	}
	if got := servedName(t, addr); got != "second.example" {
		t.Fatalf("after a failed reload served %q, want the previous second.example", got)
	}
	write(t, certFile, []byte("not PEM"))
	hangups <- syscall.SIGHUP
	hangups <- syscall.SIGHUP // the first was handled once the second is taken
	if got := servedName(t, addr); got != "second.example" {
		t.Fatalf("after a garbage certificate served %q, want second.example", got)
	}
}

func TestNewFailsWithoutAUsablePair(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(filepath.Join(dir, "missing.pem"), filepath.Join(dir, "missing-key.pem"), zerolog.Nop()); err == nil {
		t.Fatal("New accepted missing files")
	}
}
