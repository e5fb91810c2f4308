package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// S3rver is a running s3rver (npm `s3rver`, an S3 emulation on Node that
// keeps objects as files). It is the e2e tests' store WITHOUT conditional
// writes: it ignores If-None-Match and If-Match (a second create overwrites,
// a wrong ETag succeeds), so only s3cond can make a race there come out
// right. Its other limits, which the tests work around:
//   - no ListMultipartUploads (501) and no AbortMultipartUpload (405);
//   - it overwrites a file in place, so a GET racing an overwrite of the
//     same key can return a short or empty body (a torn read);
//   - it does not verify SigV4 signatures, only that the key id exists
//     (S3RVER); it resolves "a//b" itself (404), as a file path.
type S3rver struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	Secret    string
	DataDir   string
	Process   *Process
}

// S3rverPath finds s3rver's entry script: $S3COND_S3RVER, else the copy
// pinned by e2e/node/package-lock.json (install it with `npm ci` in e2e/node).
func S3rverPath(t testing.TB) (string, error) {
	if p := os.Getenv("S3COND_S3RVER"); p != "" {
		return p, nil
	}
	p := filepath.Join(RepoRoot(t), "e2e", "node", "node_modules", ".bin", "s3rver")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("s3rver not installed (run `npm ci` in e2e/node): %w", err)
	}
	return p, nil
}

// StartS3rver starts s3rver on a free 127.0.0.1 port with a fresh data
// directory, creating the given buckets at start-up, and stops it when the
// test ends. It runs node directly rather than through npx so the harness
// holds the server's own PID. A missing node or s3rver fails the test.
func StartS3rver(t testing.TB, buckets ...string) *S3rver {
	t.Helper()
	script := Require(t, "s3rver")
	node := Require(t, "node")
	port := FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &S3rver{Endpoint: "http://" + addr, AccessKey: "S3RVER", Secret: "S3RVER", DataDir: t.TempDir()}
	// --silent: s3rver logs every request, which costs CPU the races need.
	args := []string{script, "-d", s.DataDir, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "--silent"}
	for _, b := range buckets {
		args = append(args, "--configure-bucket", b)
	}
	s.Process = Start(t, Spec{Name: "s3rver", Path: node, Args: args, Addr: addr})
	return s
}
