package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
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

func TestServeTLSWithAdminListenerAndShutdown(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	testkit.WriteSelfSigned(t, certFile, keyFile, "127.0.0.1")
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

	// serve reports no event when it listens: ask its admin listener.
	ready, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	testkit.Eventually(ready, t, "/readyz to answer 200", func(ctx context.Context) error {
		select {
		case err := <-served:
			t.Fatalf("serve ended before it was ready: %v", err)
		default:
		}
		return getStatus(ctx, "http://"+adminListen+"/readyz", http.StatusOK)
	})

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

// getStatus is nil if a GET of url answers want.
func getStatus(ctx context.Context, url string, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("status %d, want %d", resp.StatusCode, want)
	}
	return nil
}
