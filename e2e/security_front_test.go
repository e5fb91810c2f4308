package e2e

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// versitygwAdmin runs `versitygw admin` with an access key pair against
// endpoint and returns its combined output and whether it succeeded.
func versitygwAdmin(t *testing.T, endpoint string, cred Credentials, args ...string) (string, bool) {
	t.Helper()
	bin := testservers.Require(t, "versitygw")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	all := append([]string{"admin", "--access", cred.AccessKey, "--secret", cred.Secret, "--endpoint-url", endpoint}, args...)
	out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
	return string(out), err == nil
}

// TestSecurityAdminAPINotForwarded (issue 13, hole 2): versitygw serves
// its admin API on the S3 port, and s3cond signs what it forwards with
// versitygw's root key. It once forwarded PATCH /create-user as a write to
// a bucket named create-user, which a key granted `*` read-write may make:
// `versitygw admin --endpoint-url <s3cond> create-user --role admin` made
// the client an administrator of the store. The control creates a user
// the same way directly, so the test sees a working admin API.
func TestSecurityAdminAPINotForwarded(t *testing.T) {
	e := NewEnv(t, WithBackendIAM())
	e.RequireProxy(t)
	root := Credentials{e.Backend.AccessKey, e.Backend.Secret}
	if out, ok := versitygwAdmin(t, e.Backend.Endpoint, root, "create-user", "--access", "control-user", "--secret", "control-secret-123", "--role", "user"); !ok {
		t.Fatalf("control: creating a user directly on versitygw failed: %s", out)
	}

	out, ok := versitygwAdmin(t, e.Endpoint, e.RW, "create-user", "--access", "intruder", "--secret", "intruder-secret-123", "--role", "admin")
	if ok || !strings.Contains(out, "MethodNotAllowed") {
		t.Errorf("create-user through s3cond: succeeded=%v, output %q; want MethodNotAllowed", ok, out)
	}
	resp := Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPatch, Path: "/create-user",
		Body: []byte(`<Account><Access>intruder2</Access><Secret>intruder-secret-456</Secret><Role>admin</Role></Account>`)})
	resp.RequireError(t, http.StatusMethodNotAllowed, "MethodNotAllowed")
	Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPatch, Path: "/list-users"}).
		RequireError(t, http.StatusMethodNotAllowed, "MethodNotAllowed")
	CreateBucket(t, e.Client(t, e.RW), "admin-target")
	Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPatch, Path: "/admin-target/create"}).
		RequireError(t, http.StatusMethodNotAllowed, "MethodNotAllowed")

	users, ok := versitygwAdmin(t, e.Backend.Endpoint, root, "list-users")
	if !ok || !strings.Contains(users, "control-user") {
		t.Fatalf("list-users on versitygw: %v %q; want the control user listed", ok, users)
	}
	if strings.Contains(users, "intruder") {
		t.Fatalf("an account was created through s3cond:\n%s", users)
	}
	_, err := NewS3Client(e.Backend.Endpoint, Credentials{"intruder", "intruder-secret-123"}, nil).
		ListBuckets(t.Context(), &s3.ListBucketsInput{})
	if err == nil {
		t.Fatal("the intruder's account works against versitygw")
	}
}

// TestSecurityConnectionHeaderKeepsSignedHeaders (issue 13, hole 3): a
// presigned PUT that mandates x-amz-meta-owner, sent with that header and
// an unsigned `Connection: x-amz-meta-owner`, was verified with the header
// and forwarded without it (a proxy drops what Connection names): the
// object was stored without the metadata its URL required. s3cond now
// refuses it and stores nothing; the same URL without the Connection
// header then stores the object with its metadata.
func TestSecurityConnectionHeaderKeepsSignedHeaders(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "conn")
	presigned := presignWithHeader(t, e.Endpoint+"/conn/owned", e.RW, "X-Amz-Meta-Owner", "alice")

	send := func(connection string) *RawResponse {
		req, err := http.NewRequest(http.MethodPut, presigned, strings.NewReader("owned body"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Meta-Owner", "alice")
		if connection != "" {
			req.Header.Set("Connection", connection)
		}
		resp, err := Send(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	send("x-amz-meta-owner").RequireError(t, http.StatusBadRequest, "InvalidArgument")
	requireMissing(t, t.Context(), e.BackendClient(), "conn", "owned")

	if resp := send("keep-alive"); resp.Status != http.StatusOK {
		t.Fatalf("the presigned PUT without a hostile Connection header: %d %s", resp.Status, resp.Body)
	}
	head, err := e.BackendClient().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("conn"), Key: aws.String("owned")})
	if err != nil || head.Metadata["owner"] != "alice" {
		t.Fatalf("stored %+v, %v; want owner=alice", head, err)
	}
}

// presignWithHeader presigns a PUT of rawURL that signs header name: value,
// kept a header (not hoisted into the query), so the request must carry it.
func presignWithHeader(t *testing.T, rawURL string, cred Credentials, name, value string) string {
	t.Helper()
	r, err := http.NewRequest(http.MethodPut, rawURL+"?X-Amz-Expires=300", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set(name, value)
	signer := testkit.S3Signer(func(o *v4.SignerOptions) { o.DisableHeaderHoisting = true })
	signed, headers, err := signer.PresignHTTP(t.Context(), aws.Credentials{AccessKeyID: cred.AccessKey, SecretAccessKey: cred.Secret},
		r, UnsignedPayload, "s3", Region, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := headers[name]; !ok {
		t.Fatalf("%s is not among the signed headers %v", name, headers)
	}
	return signed
}

// TestSecurityListBucketsShowsGrantedBuckets (issue 13, hole 5): a key
// granted only granted-* listed every bucket of the store. The list is now
// the store's answer filtered by the key's grants, paging included.
func TestSecurityListBucketsShowsGrantedBuckets(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	rw := e.Client(t, e.RW)
	for _, b := range []string{"granted-a", "granted-b", "private-c", "secret-d"} {
		CreateBucket(t, rw, b)
	}
	list := func(cred Credentials, in *s3.ListBucketsInput) []string {
		t.Helper()
		var names []string
		pages := s3.NewListBucketsPaginator(e.Client(t, cred), in)
		for pages.HasMorePages() {
			out, err := pages.NextPage(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range out.Buckets {
				names = append(names, aws.ToString(b.Name))
			}
		}
		return names
	}
	if got := strings.Join(list(e.Granted, &s3.ListBucketsInput{}), ","); got != "granted-a,granted-b" {
		t.Errorf("the granted key lists %s, want granted-a,granted-b", got)
	}
	if got := strings.Join(list(e.Granted, &s3.ListBucketsInput{MaxBuckets: aws.Int32(1)}), ","); got != "granted-a,granted-b" {
		t.Errorf("the granted key lists %s one bucket a page, want granted-a,granted-b", got)
	}
	if got := strings.Join(list(e.RW, &s3.ListBucketsInput{}), ","); got != "granted-a,granted-b,private-c,secret-d" {
		t.Errorf("the key granted * lists %s, want every bucket", got)
	}
}
