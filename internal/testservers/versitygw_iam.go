package testservers

import (
	"testing"
)

// StartVersityGWWithIAM is StartVersityGW with versitygw's internal IAM
// service (--iam-dir): its admin API on the S3 port (PATCH /create-user,
// /list-users, ...) then manages real accounts, which is what a proxy that
// forwarded that API would hand its clients. Restart drops the flag.
func StartVersityGWWithIAM(t testing.TB) *VersityGW {
	t.Helper()
	path := Require(t, "versitygw")
	v := &VersityGW{
		AccessKey: "vgwaccesskey",
		Secret:    "vgw-secret-key-for-tests",
		DataDir:   t.TempDir(),
	}
	iamDir := t.TempDir() // versitygw writes users.json there; it must exist
	addr := FreeAddr(t)
	v.Endpoint = "http://" + addr
	v.Process = Start(t, Spec{
		Name: "versitygw",
		Path: path,
		Args: append([]string{"--iam-dir", iamDir}, v.args(addr)...),
		Addr: addr,
	})
	return v
}
