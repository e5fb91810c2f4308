package testservers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// RGW is a running Ceph RADOS Gateway (Debian's radosgw) over a one-monitor,
// one-OSD cluster whose OSD keeps its objects in RAM (memstore), with one S3
// user. Everything lives in a temporary directory and ends with the test.
type RGW struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	Secret    string
	Version   string        // "16.2.15", from radosgw --version
	StartUp   time.Duration // from the first command to the first S3 answer
}

// rgwMemstoreBytes is the OSD's RAM-backed capacity: the e2e tests write
// far less, and memstore takes RAM only for what is written.
const rgwMemstoreBytes = 3 << 30

// rgwUp bounds each stage of the start on a loaded machine: the monitor,
// the OSD's boot, and radosgw's creation of its pools (about 20 s in all
// on a quiet 2-core machine).
const rgwUp = 2 * time.Minute

// StartRGW starts a monitor, a memstore OSD and radosgw with the beast
// frontend on 127.0.0.1, creates an S3 user and stops all three when the
// test ends. cephx stays on: with `auth * required = none`, radosgw cannot
// authenticate to its monitor (get_initial_auth_request returned -13).
func StartRGW(t testing.TB) *RGW {
	t.Helper()
	for _, program := range []string{"radosgw", "radosgw-admin", "ceph-mon", "ceph-osd", "ceph-authtool", "monmaptool", "ceph"} {
		Require(t, program)
	}
	started := time.Now()
	c := &cephCluster{t: t, dir: t.TempDir()}
	monAddr, rgwAddr := FreeAddr(t), FreeAddr(t)
	c.writeConfig(monAddr, rgwAddr)
	c.writeKeyring()
	c.run("monmaptool", "--create", "--fsid", c.fsid, "--addv", "a", "[v2:"+monAddr+"]", filepath.Join(c.dir, "monmap"))
	c.run("ceph-mon", "--mkfs", "-i", "a", "-c", c.conf, "--monmap", filepath.Join(c.dir, "monmap"))
	// -d: in the foreground, logging to stderr (shown if the test fails).
	Start(t, Spec{Name: "ceph-mon", Path: "ceph-mon", Args: []string{"-d", "-i", "a", "-c", c.conf}, Addr: monAddr, Wait: rgwUp})

	osdUUID := newUUID(t)
	c.run("ceph", "-c", c.conf, "osd", "new", osdUUID)
	c.run("ceph-osd", "-i", "0", "-c", c.conf, "--mkfs", "--osd-uuid", osdUUID)
	// The OSD binds ports it finds free; it is up once the monitor has
	// marked it so.
	Start(t, Spec{Name: "ceph-osd", Path: "ceph-osd", Args: []string{"-d", "-i", "0", "-c", c.conf},
		Ready: "state: booting -> active", Wait: rgwUp})

	// radosgw listens once it has created its pools.
	Start(t, Spec{Name: "radosgw", Path: "radosgw", Args: []string{"-d", "-n", "client.rgw", "-c", c.conf}, Addr: rgwAddr, Wait: rgwUp})
	r := &RGW{Endpoint: "http://" + rgwAddr, AccessKey: "RGWE2EACCESSKEY00001", Secret: "rgw-e2e-secret-key-0123456789abcdefghij"}
	c.run("radosgw-admin", "-c", c.conf, "user", "create", "--uid", "s3cond-e2e", "--display-name", "s3cond e2e",
		"--access-key", r.AccessKey, "--secret", r.Secret)
	r.Version = rgwVersion(c.run("radosgw", "--version"))
	r.StartUp = time.Since(started)
	return r
}

// cephCluster is StartRGW's working state: the directory holding the
// cluster's configuration, keys and daemon data.
type cephCluster struct {
	t    testing.TB
	dir  string
	conf string
	fsid string
}

// writeConfig writes ceph.conf: every path under the cluster's directory,
// one replica per pool, few placement groups (radosgw makes six pools and
// one OSD holds them all), messenger v2 only, on 127.0.0.1.
func (c *cephCluster) writeConfig(monAddr, rgwAddr string) {
	c.fsid = newUUID(c.t)
	c.conf = filepath.Join(c.dir, "ceph.conf")
	d := c.dir
	lines := []string{
		"[global]",
		"fsid = " + c.fsid,
		"mon host = v2:" + monAddr,
		"public addr = 127.0.0.1",
		"ms bind msgr1 = false",
		"ms bind ipv6 = false",
		"auth cluster required = cephx",
		"auth service required = cephx",
		"auth client required = cephx",
		"keyring = " + filepath.Join(d, "keyring"),
		"run dir = " + filepath.Join(d, "run"),
		"admin socket = " + filepath.Join(d, "run", "$name.asok"),
		"pid file = " + filepath.Join(d, "run", "$name.pid"),
		"log file = " + filepath.Join(d, "log", "$name.log"),
		"mon cluster log file = " + filepath.Join(d, "log", "cluster.log"),
		"crash dir = " + filepath.Join(d, "crash"),
		"mon data = " + filepath.Join(d, "mon", "$id"),
		"osd data = " + filepath.Join(d, "osd", "$id"),
		"osd objectstore = memstore",
		fmt.Sprintf("memstore device bytes = %d", rgwMemstoreBytes),
		"osd pool default size = 1",
		"osd pool default min size = 1",
		"osd pool default pg num = 8",
		"osd pool default pgp num = 8",
		"osd pool default pg autoscale mode = off",
		"mon allow pool size one = true",
		"mon warn on pool no redundancy = false",
		"mon max pg per osd = 1000",
		"osd crush chooseleaf type = 0",
		"rgw data = " + filepath.Join(d, "rgw"),
		"rgw frontends = beast endpoint=" + rgwAddr,
	}
	for _, sub := range []string{"run", "log", "crash", "mon/a", "osd/0", "rgw"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := os.WriteFile(c.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		c.t.Fatalf("write ceph.conf: %v", err)
	}
}

// writeKeyring makes one keyring holding every daemon's and client's key;
// the monitor's mkfs imports them all into its auth database.
func (c *cephCluster) writeKeyring() {
	keyring := filepath.Join(c.dir, "keyring")
	c.run("ceph-authtool", "--create-keyring", keyring, "--gen-key", "-n", "mon.", "--cap", "mon", "allow *")
	entities := [][]string{
		{"client.admin", "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mgr", "allow *"},
		{"osd.0", "--cap", "mon", "allow profile osd", "--cap", "osd", "allow *", "--cap", "mgr", "allow profile osd"},
		{"client.rgw", "--cap", "mon", "allow rw", "--cap", "osd", "allow rwx", "--cap", "mgr", "allow rw"},
	}
	for _, e := range entities {
		c.run("ceph-authtool", append([]string{keyring, "--gen-key", "-n", e[0]}, e[1:]...)...)
	}
}

// run runs one of Ceph's set-up commands to completion and returns its
// output; a failure ends the test.
func (c *cephCluster) run(program string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rgwUp)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", program, strings.Join(args, " "), err, out)
	}
	return string(out)
}

var cephVersionPattern = regexp.MustCompile(`ceph version (\S+)`)

func rgwVersion(out string) string {
	if m := cephVersionPattern.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return strings.TrimSpace(out)
}

// newUUID reads one from the kernel, as Ceph's own tools would make one.
func newUUID(t testing.TB) string {
	raw, err := os.ReadFile("/proc/sys/kernel/random/uuid")
	if err != nil {
		t.Fatalf("make a UUID: %v", err)
	}
	return strings.TrimSpace(string(raw))
}
