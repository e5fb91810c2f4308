package testservers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// installStep is what a missing program's message tells the reader to run.
const installStep = "scripts/test-deps.sh installs it (./test.sh runs that first)"

// Require makes sure program, which the test cannot run without, is
// installed, and returns its path. Known names: "moto" (moto_server, or the
// Python of $S3COND_MOTO_PYTHON), "dynalite" (node and the dynalite pinned by
// e2e/node), "node_modules" (node and e2e/node's pinned packages),
// "versitygw", "rclone-serve-s3", "seaweedfs" (weed), "boto3" (the first python3 on PATH, importing boto3),
// "debian-boto3" (Debian's /usr/bin/python3 with python3-boto3); any other name is looked up on PATH.
//
// A missing program fails the test with a message naming the install step,
// so a full run (./test.sh, CI) never passes by skipping. Under `go test
// -short` the test is skipped instead, with the same message: -short is the
// run that needs only Go.
func Require(t testing.TB, program string) string {
	t.Helper()
	path, err := find(t, program)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s is needed and not installed (%v); %s", program, err, installStep)
	if testing.Short() {
		t.Skip("-short: skipped: " + msg)
	} else {
		t.Fatal(msg)
	}
	return ""
}

func find(t testing.TB, program string) (string, error) {
	switch program {
	case "moto":
		if p := os.Getenv("S3COND_MOTO_PYTHON"); p != "" {
			return exec.LookPath(p)
		}
		// moto_server is installed beside the Python that has moto.
		if _, err := exec.LookPath("moto_server"); err != nil {
			return "", err
		}
		return exec.LookPath(MotoPython())
	case "dynalite":
		if _, err := exec.LookPath("node"); err != nil {
			return "", err
		}
		return DynalitePath(t)
	case "node_modules":
		if _, err := exec.LookPath("node"); err != nil {
			return "", err
		}
		dir := filepath.Join(RepoRoot(t), "e2e", "node", "node_modules")
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("run `npm ci` in e2e/node: %w", err)
		}
		return dir, nil
	case "versitygw":
		return VersityGWPath()
	case "rclone-serve-s3":
		return RcloneS3Path()
	case "seaweedfs":
		return SeaweedFSPath()
	case "s3rver":
		if _, err := exec.LookPath("node"); err != nil {
			return "", err
		}
		return S3rverPath(t)
	case "boto3":
		// The Python on PATH must import boto3 (the e2e client scripts).
		python, err := exec.LookPath("python3")
		if err != nil {
			return "", err
		}
		if out, err := exec.Command(python, "-c", "import boto3").CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s cannot import boto3: %v: %s", python, err, out)
		}
		return python, nil
	case "debian-boto3":
		// Debian's python3-boto3 (botocore 1.29 on bookworm), beside the
		// pip one the first python3 on PATH has: what distro users run.
		const python = "/usr/bin/python3"
		if out, err := exec.Command(python, "-c", "import boto3").CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s cannot import boto3 (apt-get install python3-boto3): %v: %s", python, err, out)
		}
		return python, nil
	case "":
		return "", errors.New("no program named")
	default:
		return exec.LookPath(program)
	}
}
