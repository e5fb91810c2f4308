package testservers

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// VersityGW is a running versitygw (an S3-compatible gateway over a POSIX
// directory) that checks SigV4 signatures with one static key pair.
type VersityGW struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	Secret    string
	DataDir   string
	Process   *Process
}

// versityGWVersion is the release .ci/run installs; the lookup below does not
// check it, it only names it in the error message.
const versityGWVersion = "v1.8.0"

// VersityGWPath finds the versitygw binary: $S3COND_VERSITYGW, then PATH,
// then $HOME/.cache/s3cond/bin/versitygw (where .ci/run installs it).
func VersityGWPath() (string, error) {
	if p := os.Getenv("S3COND_VERSITYGW"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "s3cond", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("versitygw not found: set S3COND_VERSITYGW, put it on PATH, or run " +
		"`GOBIN=$HOME/.cache/s3cond/bin go install github.com/versity/versitygw/cmd/versitygw@" + versityGWVersion + "`")
}

// StartVersityGW starts versitygw on a free port with a fresh data directory
// and stops it when the test ends. Create buckets through its API: a directory
// made by hand has no ACL and versitygw then answers 500.
func StartVersityGW(t testing.TB) *VersityGW {
	t.Helper()
	path := Require(t, "versitygw")
	v := &VersityGW{
		AccessKey: "vgwaccesskey",
		Secret:    "vgw-secret-key-for-tests",
		DataDir:   t.TempDir(),
	}
	addr := FreeAddr(t)
	v.Endpoint = "http://" + addr
	v.Process = Start(t, Spec{
		Name: "versitygw",
		Path: path,
		Args: v.args(addr),
		Addr: addr,
	})
	return v
}

// args starts versitygw with keep-alive on: it is off by default (every
// answer then says Connection: close), while the stores s3cond fronts in
// production keep connections, and s3cond's reuse of them (a connection the
// backend closed while idle, a reset after an abort) needs testing.
func (v *VersityGW) args(addr string) []string {
	return []string{"--port", addr, "--access", v.AccessKey, "--secret", v.Secret, "--keep-alive", "posix", v.DataDir}
}

// Restart starts versitygw again on the same address and data directory,
// after a test stopped it to simulate a backend outage.
func (v *VersityGW) Restart(t testing.TB) {
	t.Helper()
	v.Process.Stop()
	path := Require(t, "versitygw")
	addr := v.Process.Addr
	v.Process = Start(t, Spec{
		Name: "versitygw",
		Path: path,
		Args: v.args(addr),
		Addr: addr,
	})
}
