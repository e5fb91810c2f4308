package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestAuthErrors checks that every way of failing authentication gets the
// status and code Amazon S3 answers with, and that valid presigned URLs work.
func TestAuthErrors(t *testing.T) {
	e := NewEnv(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "auth")
	putBytes(t, ctx, rw, "auth", "existing", []byte("hello"))

	t.Run("bad secret", func(t *testing.T) {
		c := e.Client(t, Credentials{e.RW.AccessKey, e.RW.Secret + "x"})
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("existing")})
		RequireS3Error(t, err, 403, "SignatureDoesNotMatch")
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("auth"), Key: aws.String("bad-secret"), Body: strings.NewReader("x")})
		RequireS3Error(t, err, 403, "SignatureDoesNotMatch")
		requireMissing(t, ctx, e.BackendClient(), "auth", "bad-secret")
	})
	t.Run("unknown key", func(t *testing.T) {
		if e.Mode == ModeDirect {
			t.Skip("versitygw answers an unknown key with 404 XAdminUserNotFound, not S3's 403 InvalidAccessKeyId")
		}
		c := e.Client(t, Credentials{"AKIANOSUCHKEYE2E", "whatever-secret"})
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("existing")})
		RequireS3Error(t, err, 403, "InvalidAccessKeyId")
	})
	t.Run("skewed clock", func(t *testing.T) {
		for _, skew := range []time.Duration{-20 * time.Minute, 20 * time.Minute} {
			resp := Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodGet, Path: "/auth/existing", SignTime: time.Now().Add(skew)})
			resp.RequireError(t, 403, "RequestTimeTooSkewed")
		}
		// Within 15 minutes is accepted.
		resp := Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodGet, Path: "/auth/existing", SignTime: time.Now().Add(-10 * time.Minute)})
		if resp.Status != 200 || string(resp.Body) != "hello" {
			t.Fatalf("request signed 10 minutes ago: %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("expired presigned URL", func(t *testing.T) {
		u, err := PresignURL(e.Endpoint, http.MethodGet, "/auth/existing", e.RW, time.Now().Add(-10*time.Minute), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		resp := getURL(t, u)
		resp.RequireError(t, 403, "AccessDenied")
	})
	t.Run("no auth", func(t *testing.T) {
		Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodGet, Path: "/auth/existing", Unsigned: true}).RequireError(t, 403, "AccessDenied")
		Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/auth/anonymous", Body: []byte("x"), Unsigned: true}).RequireError(t, 403, "AccessDenied")
		requireMissing(t, ctx, e.BackendClient(), "auth", "anonymous")
	})
	t.Run("malformed authorization", func(t *testing.T) {
		resp := Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodGet, Path: "/auth/existing", Unsigned: true,
			Header: http.Header{"Authorization": {"AWS4-HMAC-SHA256 Credential=garbage"}, "X-Amz-Date": {time.Now().UTC().Format("20060102T150405Z")},
				"X-Amz-Content-Sha256": {emptySHA256}}})
		resp.RequireError(t, 400, "AuthorizationHeaderMalformed")
	})
	t.Run("valid presigned GET and PUT", func(t *testing.T) {
		presigner := s3.NewPresignClient(e.Client(t, e.RW))
		get, err := presigner.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("existing")},
			s3.WithPresignExpires(5*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if resp := getURL(t, get.URL); resp.Status != 200 || string(resp.Body) != "hello" {
			t.Fatalf("presigned GET: %d %s", resp.Status, resp.Body)
		}
		put, err := presigner.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("auth"), Key: aws.String("presigned-put")},
			s3.WithPresignExpires(5*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, put.URL, bytes.NewReader([]byte("via presigned put")))
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range put.SignedHeader {
			if !strings.EqualFold(k, "Host") {
				req.Header[k] = vs
			}
		}
		resp, err := Send(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != 200 {
			t.Fatalf("presigned PUT: %d %s", resp.Status, resp.Body)
		}
		if got := getBytes(t, ctx, e.BackendClient(), "auth", "presigned-put"); string(got) != "via presigned put" {
			t.Fatalf("presigned PUT stored %q", got)
		}
	})
}

// TestGrants checks that keys reach only the buckets and access their
// configuration grants them.
func TestGrants(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "private")
	CreateBucket(t, rw, "granted-one")
	putBytes(t, ctx, rw, "private", "k", []byte("private"))
	putBytes(t, ctx, rw, "granted-one", "k", []byte("granted"))

	t.Run("bucket not granted", func(t *testing.T) {
		g := e.Client(t, e.Granted)
		_, err := g.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("private"), Key: aws.String("k")})
		RequireS3Error(t, err, 403, "AccessDenied")
		_, err = g.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("private"), Key: aws.String("new"), Body: strings.NewReader("x")})
		RequireS3Error(t, err, 403, "AccessDenied")
		_, err = g.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("private")})
		RequireS3Error(t, err, 403, "AccessDenied")
		requireMissing(t, ctx, e.BackendClient(), "private", "new")

		if got := getBytes(t, ctx, g, "granted-one", "k"); string(got) != "granted" {
			t.Fatalf("granted bucket read %q", got)
		}
		putBytes(t, ctx, g, "granted-one", "written", []byte("by granted key"))
	})
	t.Run("read-only key writing", func(t *testing.T) {
		ro := e.Client(t, e.RO)
		if got := getBytes(t, ctx, ro, "private", "k"); string(got) != "private" {
			t.Fatalf("read-only key read %q", got)
		}
		if _, err := ro.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("private")}); err != nil {
			t.Fatalf("read-only key list: %v", err)
		}
		_, err := ro.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("private"), Key: aws.String("ro-write"), Body: strings.NewReader("x")})
		RequireS3Error(t, err, 403, "AccessDenied")
		_, err = ro.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("private"), Key: aws.String("k")})
		RequireS3Error(t, err, 403, "AccessDenied")
		_, err = ro.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("private"), Key: aws.String("ro-mpu")})
		RequireS3Error(t, err, 403, "AccessDenied")
		_, err = ro.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("private"), Key: aws.String("ro-copy"), CopySource: aws.String("private/k")})
		RequireS3Error(t, err, 403, "AccessDenied")
		_, err = ro.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ro-bucket")})
		RequireS3Error(t, err, 403, "AccessDenied")
		requireMissing(t, ctx, e.BackendClient(), "private", "ro-write")
		requireMissing(t, ctx, e.BackendClient(), "private", "ro-copy")
		if got := getBytes(t, ctx, rw, "private", "k"); string(got) != "private" {
			t.Fatalf("object the read-only key tried to delete now reads %q", got)
		}
	})
}

// TestTamperedBody sends a body that differs from the SHA-256 it was signed
// with, and a Content-MD5 that does not match: nothing may be stored.
func TestTamperedBody(t *testing.T) {
	e := NewEnv(t)
	ctx := t.Context()
	CreateBucket(t, e.Client(t, e.RW), "tamper")
	signed := PatternBytes(7, 64<<10)
	sent := bytes.Clone(signed)
	sent[len(sent)-1] ^= 0xff
	sum := sha256.Sum256(signed)

	resp := Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/tamper/sha", Body: sent, PayloadHash: hex.EncodeToString(sum[:])})
	resp.RequireError(t, 400, "XAmzContentSHA256Mismatch")
	requireMissing(t, ctx, e.Client(t, e.RW), "tamper", "sha")
	requireMissing(t, ctx, e.BackendClient(), "tamper", "sha")

	otherMD5 := md5.Sum([]byte("something else"))
	resp = Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/tamper/md5", Body: signed,
		Header: http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(otherMD5[:])}}})
	resp.RequireError(t, 400, "BadDigest")
	requireMissing(t, ctx, e.BackendClient(), "tamper", "md5")

	resp = Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/tamper/md5-unsigned", Body: signed, PayloadHash: UnsignedPayload,
		Header: http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(otherMD5[:])}}})
	resp.RequireError(t, 400, "BadDigest")
	requireMissing(t, ctx, e.BackendClient(), "tamper", "md5-unsigned")

	resp = Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/tamper/md5-invalid", Body: signed,
		Header: http.Header{"Content-Md5": {"not-an-md5"}}})
	resp.RequireError(t, 400, "InvalidDigest")
	requireMissing(t, ctx, e.BackendClient(), "tamper", "md5-invalid")

	// The same requests with honest digests are stored.
	rightMD5 := md5.Sum(signed)
	resp = Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/tamper/honest", Body: signed,
		Header: http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(rightMD5[:])}}})
	if resp.Status != 200 {
		t.Fatalf("honest PUT: %d %s", resp.Status, resp.Body)
	}
	if got := getBytes(t, ctx, e.BackendClient(), "tamper", "honest"); !bytes.Equal(got, signed) {
		t.Fatal("honest PUT stored different bytes")
	}
	requireOnlyKeys(t, e.BackendClient(), "tamper", "honest")
}

// TestBackendDown stops versitygw: s3cond must answer with an S3 XML error
// (502 or 503), and work again once the backend is back.
func TestBackendDown(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "outage")
	putBytes(t, ctx, c, "outage", "k", []byte("before"))

	e.Backend.Process.Stop()
	for _, req := range []RawRequest{
		{Method: http.MethodGet, Path: "/outage/k"},
		{Method: http.MethodPut, Path: "/outage/k2", Body: []byte("during")},
		{Method: http.MethodGet, Path: "/outage", Query: map[string][]string{"list-type": {"2"}}},
	} {
		resp := Do(t, e.Endpoint, e.RW, req)
		if resp.Status != 502 && resp.Status != 503 {
			t.Fatalf("%s %s with the backend down: status %d, want 502 or 503: %s", req.Method, req.Path, resp.Status, resp.Body)
		}
		doc, err := resp.Error()
		if err != nil {
			t.Fatalf("%s %s with the backend down: %v", req.Method, req.Path, err)
		}
		if doc.Code == "" || resp.Header.Get("X-Amz-Request-Id") == "" {
			t.Fatalf("%s %s with the backend down: code %q request id %q", req.Method, req.Path, doc.Code, resp.Header.Get("X-Amz-Request-Id"))
		}
		t.Logf("%s %s with the backend down: %d %s", req.Method, req.Path, resp.Status, doc.Code)
	}

	e.Backend.Restart(t)
	if got := getBytes(t, ctx, c, "outage", "k"); string(got) != "before" {
		t.Fatalf("after the backend came back: %q", got)
	}
	requireMissing(t, ctx, c, "outage", "k2")
}

func getURL(t testing.TB, u string) *RawResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
