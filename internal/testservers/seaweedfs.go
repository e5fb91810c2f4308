package testservers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// seaweedFSVersion names the build scripts/build-seaweedfs.sh makes.
const seaweedFSVersion = "4.53 (github.com/seaweedfs/seaweedfs v0.0.0-20261109003541-7506e5f91cd6)"

// SeaweedFSPath finds the weed binary: $S3COND_SEAWEEDFS, else
// $HOME/.cache/s3cond/bin/weed (where scripts/build-seaweedfs.sh puts it).
func SeaweedFSPath() (string, error) {
	if p := os.Getenv("S3COND_SEAWEEDFS"); p != "" {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "s3cond", "bin", "weed")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("weed (SeaweedFS " + seaweedFSVersion + ") not found: set S3COND_SEAWEEDFS, or run scripts/build-seaweedfs.sh (about 14 minutes)")
}

// SeaweedFS is a running `weed server -s3`: master, volume server, filer
// and S3 gateway in one process, with one S3 identity.
type SeaweedFS struct {
	Endpoint  string // the S3 gateway, http://127.0.0.1:PORT
	AccessKey string
	Secret    string
	StartUp   time.Duration // from the start to a master that places writes
}

// seaweedFSVolumes is -volume.max: each bucket is a collection with volumes
// of its own, and with weed's default of 8 writes fail with 500 after a
// few buckets.
const seaweedFSVolumes = "1000"

// StartSeaweedFS runs `weed server -s3` on free 127.0.0.1 ports, every
// gRPC port set (weed's default, HTTP port + 10000, may be taken), the
// Iceberg and Lance listeners off, and stops it when the test ends.
func StartSeaweedFS(t testing.TB) *SeaweedFS {
	t.Helper()
	path := Require(t, "seaweedfs")
	started := time.Now()
	dir := t.TempDir()
	s := &SeaweedFS{AccessKey: "SEAWEEDE2EACCESSKEY1", Secret: "seaweed-e2e-secret-key-0123456789abcdef"}
	identities := fmt.Sprintf(`{"identities":[{"name":"s3cond-e2e","credentials":[{"accessKey":%q,"secretKey":%q}],`+
		`"actions":["Admin","Read","Write","List","Tagging"]}]}`, s.AccessKey, s.Secret)
	if err := os.WriteFile(filepath.Join(dir, "s3.json"), []byte(identities), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"data", "master"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ports := map[string]int{}
	for _, name := range []string{"master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
		"filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc"} {
		ports[name] = FreePort(t)
	}
	args := []string{"server", "-ip", "127.0.0.1", "-ip.bind", "127.0.0.1",
		"-dir", filepath.Join(dir, "data"), "-master.dir", filepath.Join(dir, "master"),
		"-volume.max", seaweedFSVolumes, "-master.telemetry=false",
		"-filer", "-filer.localSocket", filepath.Join(dir, "filer.sock"),
		"-s3", "-s3.config", filepath.Join(dir, "s3.json"), "-s3.port.iceberg", "0", "-s3.port.lance", "0"}
	for name, port := range ports {
		args = append(args, fmt.Sprintf("-%s=%d", name, port))
	}
	s3Addr := fmt.Sprintf("127.0.0.1:%d", ports["s3.port"])
	Start(t, Spec{Name: "weed server", Path: path, Needs: "seaweedfs", Args: args, Dir: dir, Addr: s3Addr, Wait: time.Minute})
	waitSeaweedFSPlacesWrites(t, fmt.Sprintf("http://127.0.0.1:%d", ports["master.port"]))
	s.Endpoint = "http://" + s3Addr
	s.StartUp = time.Since(started)
	return s
}

// waitSeaweedFSPlacesWrites waits until the master assigns a file ID: the
// S3 gateway listens before the volume server has joined, and a write
// that comes first fails.
func waitSeaweedFSPlacesWrites(t testing.TB, master string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, master+"/dir/assign", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		last := fmt.Sprint(err)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		}
		select {
		case <-ctx.Done():
			t.Fatalf("SeaweedFS's master %s assigned no file ID within a minute (last: %s)", master, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
