package tlsreload

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// writePair writes a fresh self-signed certificate for commonName and its key.
func writePair(t *testing.T, certFile, keyFile, commonName string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: commonName},
		DNSNames:     []string{commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	write(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

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
	writePair(t, certFile, keyFile, "first.example")
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

	writePair(t, certFile, keyFile, "second.example")
	hangups <- syscall.SIGHUP
	waitForName(t, addr, "second.example")

	// A half-written renewal: the certificate no longer matches the key.
	writePair(t, certFile, filepath.Join(dir, "other-key.pem"), "third.example")
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

func waitForName(t *testing.T, addr, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := servedName(t, addr)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("served %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNewFailsWithoutAUsablePair(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(filepath.Join(dir, "missing.pem"), filepath.Join(dir, "missing-key.pem"), zerolog.Nop()); err == nil {
		t.Fatal("New accepted missing files")
	}
}
