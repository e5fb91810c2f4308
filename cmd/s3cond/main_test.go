package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, file := range []string{"../../config.yaml", "../../deploy/compose-config.yaml"} {
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
