package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

func runCmd(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, env, &out, &errOut)
	return out.String(), err
}

func TestVersion(t *testing.T) {
	out, err := runCmd(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "s3cond ") {
		t.Fatalf("version: %q, %v", out, err)
	}
}

// The shipped example configs must stay valid: check-config is what an
// operator runs first.
func TestCheckConfigOnShippedFilesMasksSecrets(t *testing.T) {
	for _, file := range []string{"../../config.yaml", "../../deploy/compose-config.yaml", "../../deploy/compose-etcd-config.yaml"} {
		out, err := runCmd(t, nil, "check-config", "--config", file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, secret := range []string{"example-secret-change-me", "backend-secret-key", "local-secret", "seaweed-secret"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: check-config printed the secret %q", file, secret)
			}
		}
		if !strings.Contains(out, "****") {
			t.Errorf("%s: no masked value in output:\n%s", file, out)
		}
	}
}

func TestBadConfigIsOneLineNamingTheKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(file, []byte("backend:\n  type: s3\n  endpoint: ftp://nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runCmd(t, nil, "check-config", "--config", file)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "backend.endpoint") {
		t.Fatalf("want one line naming backend.endpoint, got %v", err)
	}
}

func TestEnvironmentOverridesAFileKey(t *testing.T) {
	out, err := runCmd(t, []string{"S3COND_SERVER_LISTEN=127.0.0.1:9555"}, "check-config", "--config", "../../config.yaml")
	if err != nil || !strings.Contains(out, "127.0.0.1:9555") {
		t.Fatalf("override not applied: %v\n%s", err, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"table"}, {"table", "drop"}, {"serve", "--nope"}, {"serve", "extra"}} {
		_, err := runCmd(t, nil, args...)
		var usage usageError
		if !errors.As(err, &usage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestTableCreateNeedsDynamoDB(t *testing.T) {
	_, err := runCmd(t, nil, "table", "create", "--config", "../../config.yaml")
	if err == nil || !strings.Contains(err.Error(), "lease.store") {
		t.Fatalf("table create on an embedded-store config: %v", err)
	}
}

// selfSignedPair writes a certificate for 127.0.0.1 and its key into dir.
func selfSignedPair(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "s3cond-test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
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
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestServeTLSWithAdminListenerAndShutdown(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSignedPair(t, dir)
	listen, adminListen := testservers.FreeAddr(t), testservers.FreeAddr(t)
	env := []string{
		"S3COND_DATA_DIR=" + filepath.Join(dir, "data"),
		"S3COND_SERVER_LISTEN=" + listen,
		"S3COND_ADMIN_LISTEN=" + adminListen,
		"S3COND_SERVER_TLS_CERT_FILE=" + certFile,
		"S3COND_SERVER_TLS_KEY_FILE=" + keyFile,
		"S3COND_LOG_LEVEL=warn",
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- run(ctx, []string{"serve"}, env, io.Discard, io.Discard) }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + adminListen + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-served:
			t.Fatalf("serve ended before it was ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 200 (last error %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	pool := x509.NewCertPool()
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + listen + "/")
	if err != nil {
		t.Fatalf("HTTPS to the S3 listener: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amz-Request-Id") == "" {
		t.Errorf("anonymous ListBuckets over HTTPS: %d, want an S3 403", resp.StatusCode)
	}
	if resp, err := http.Get("http://" + listen + "/"); err == nil {
		resp.Body.Close()
		// net/http's own answer to plain HTTP on a TLS port; nothing reached s3cond.
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amz-Request-Id") != "" {
			t.Errorf("the TLS listener served plain HTTP: %d", resp.StatusCode)
		}
	}

	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return after SIGTERM")
	}
}

func TestServeStartupErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	base := []string{"S3COND_DATA_DIR=" + filepath.Join(dir, "data"), "S3COND_SERVER_LISTEN=127.0.0.1:0"}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"S3COND_ADMIN_LISTEN=" + busy.Addr().String()}, "admin.listen"},
		{[]string{"S3COND_ADMIN_LISTEN=", "S3COND_SERVER_TLS_CERT_FILE=" + filepath.Join(dir, "none.pem"),
			"S3COND_SERVER_TLS_KEY_FILE=" + filepath.Join(dir, "none-key.pem")}, "server.tls"},
	} {
		_, err := runCmd(t, append(append([]string{}, base...), c.env...), "serve")
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), c.want+":") {
			t.Errorf("%v: want one line starting %s:, got %v", c.env, c.want, err)
		}
	}
}
