package testservers

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// rcloneS3Version is the rclone whose `serve s3` the probe's verdicts were
// measured on (Debian's rclone 1.60 has no `serve s3`).
const rcloneS3Version = "v1.76.0"

// RcloneS3Path finds an rclone with `serve s3`: $S3COND_RCLONE_S3, else
// $HOME/.cache/s3cond/bin/rclone-serve-s3.
func RcloneS3Path() (string, error) {
	if p := os.Getenv("S3COND_RCLONE_S3"); p != "" {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "s3cond", "bin", "rclone-serve-s3")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("rclone with serve s3 not found: set S3COND_RCLONE_S3, or run " +
		"`GOBIN=$(mktemp -d) go install github.com/rclone/rclone@" + rcloneS3Version + "` and copy the binary to $HOME/.cache/s3cond/bin/rclone-serve-s3")
}

// StartRcloneS3 runs `rclone serve s3` over a fresh local directory holding
// the given buckets (top-level directories), with one key pair, and returns
// its endpoint.
func StartRcloneS3(t testing.TB, accessKey, secret string, buckets ...string) string {
	t.Helper()
	path := Require(t, "rclone-serve-s3")
	dir := t.TempDir()
	for _, b := range buckets {
		if err := os.Mkdir(filepath.Join(dir, b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr := FreeAddr(t)
	Start(t, Spec{
		Name: "rclone-serve-s3",
		Path: path,
		Args: []string{"serve", "s3", "--addr", addr, "--auth-key", accessKey + "," + secret, "--config", os.DevNull, dir},
		Addr: addr,
	})
	return "http://" + addr
}
