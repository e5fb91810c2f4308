package testservers

import (
	"os"
	"os/exec"
	"testing"
)

// StartS3condAsPID1 runs s3cond as a container runs it: as PID 1 of a PID
// namespace of its own, in a UTS namespace whose hostname is hostname (the
// network stays the host's, as with host networking). Two processes started
// so, or one restarted so, have the same hostname and PID. It needs root
// (unshare(1) creating the namespaces) and fails the test without it.
func StartS3condAsPID1(t testing.TB, hostname, configYAML string, env ...string) *S3cond {
	t.Helper()
	return StartS3condBinaryAsPID1(t, BuildS3cond(t), hostname, configYAML, env...)
}

// StartS3condBinaryAsPID1 is StartS3condAsPID1 with the s3cond binary bin
// (from BuildS3condTagged).
func StartS3condBinaryAsPID1(t testing.TB, bin, hostname, configYAML string, env ...string) *S3cond {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("running s3cond as PID 1 of its own PID namespace needs root (unshare --pid)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare(1) from util-linux is needed: %v", err)
	}
	// sh sets the hostname inside the new UTS namespace, then becomes
	// s3cond: with --fork the first process in the namespace is PID 1.
	wrap := []string{unshare, "--uts", "--pid", "--fork", "--kill-child", "--mount-proc", "--",
		"sh", "-c", `hostname "$0" && exec "$@"`, hostname}
	return startS3condUnder(t, bin, wrap, configYAML, env...)
}
