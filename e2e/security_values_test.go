package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// alphaOnly is a key granted the bucket alpha alone, read-write.
var alphaOnly = Credentials{"AKIAE2EALPHAONLY", "e2e-alpha-only-secret-0123456789"}

func withAlphaOnlyKey() Option {
	return WithConfig(func(c *Config) {
		c.Keys = append(c.Keys, KeyConfig{AccessKeyID: alphaOnly.AccessKey, Secret: alphaOnly.Secret, Buckets: []string{"alpha"}, Access: "read-write"})
	})
}

// treeSnapshot is every file and directory under root: its kind, size,
// modification time and (for a file) content hash.
func treeSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String() + " " + info.ModTime().String()
		if !d.IsDir() {
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(content)
			entry += " " + hex.EncodeToString(sum[:])
		}
		rel, _ := filepath.Rel(root, path)
		tree[rel] = entry
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return tree
}

func requireSameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for path, entry := range after {
		if before[path] != entry {
			t.Errorf("%s: %s changed or appeared: %q (was %q)", what, path, entry, before[path])
		}
	}
	for path := range before {
		if _, ok := after[path]; !ok {
			t.Errorf("%s: %s disappeared", what, path)
		}
	}
}

// TestSecurityUploadIDCannotLeaveTheGrantedBucket (issue 23, item 1):
// versitygw keeps a multipart upload in
// <bucket>/.sgwtmp/multipart/<sha256(key)>/<uploadId>, and s3cond
// forwarded the uploadId unchecked: with a key granted only alpha,
// UploadPart with uploadId=../../../../victim wrote victim/7, ListParts
// listed victim's objects and AbortMultipartUpload deleted the bucket
// victim. Each is now 404 NoSuchUpload from s3cond, and nothing in
// versitygw's data directory (nor beside it) changes. The control sends
// the same UploadPart to versitygw directly and finds the part in the
// other bucket: the hole is the store's, and only s3cond's check closes it.
func TestSecurityUploadIDCannotLeaveTheGrantedBucket(t *testing.T) {
	e := NewEnv(t, withAlphaOnlyKey())
	e.RequireProxy(t)
	rw := e.Client(t, e.RW)
	ctx := t.Context()
	for _, b := range []string{"alpha", "victim", "victim-control"} {
		CreateBucket(t, rw, b)
	}
	putBytes(t, ctx, rw, "victim", "v1", []byte("the victim's object"))
	putBytes(t, ctx, rw, "alpha", "k", []byte("alpha's own object"))
	if _, err := rw.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("alpha"), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Dir(e.Backend.DataDir)
	before, beforeParent := treeSnapshot(t, e.Backend.DataDir), dirNames(t, parent)

	for _, traversal := range []string{"../../../../victim", "../../../victim", "../../../../../outside", "..\\..\\victim"} {
		for _, tc := range []struct {
			method string
			query  url.Values
			body   []byte
		}{
			{http.MethodPut, url.Values{"uploadId": {traversal}, "partNumber": {"7"}}, []byte("a part where none belongs")},
			{http.MethodGet, url.Values{"uploadId": {traversal}}, nil},
			{http.MethodDelete, url.Values{"uploadId": {traversal}}, nil},
		} {
			resp := Do(t, e.Endpoint, alphaOnly, RawRequest{Method: tc.method, Path: "/alpha/k", Query: tc.query, Body: tc.body})
			resp.RequireError(t, http.StatusNotFound, "NoSuchUpload")
		}
	}
	requireSameTree(t, "versitygw's data directory", before, treeSnapshot(t, e.Backend.DataDir))
	requireSameTree(t, "beside versitygw's data directory", beforeParent, dirNames(t, parent))
	if got := getBytes(t, ctx, rw, "victim", "v1"); string(got) != "the victim's object" {
		t.Fatalf("victim/v1 = %q", got)
	}

	// Control: versitygw itself follows the uploadId out of the bucket.
	resp := Do(t, e.Store.Endpoint, e.Store.Cred, RawRequest{Method: http.MethodPut, Path: "/alpha/k",
		Query: url.Values{"uploadId": {"../../../../victim-control"}, "partNumber": {"7"}}, Body: []byte("control part")})
	if _, err := os.Stat(filepath.Join(e.Backend.DataDir, "victim-control", "7")); resp.Status != http.StatusOK || err != nil {
		t.Fatalf("control: UploadPart with a traversing uploadId sent to versitygw directly: %d %s, victim-control/7: %v; "+
			"the test no longer shows the store's hole", resp.Status, resp.Body, err)
	}
}

func dirNames(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, entry := range entries {
		names[entry.Name()] = entry.Type().String()
	}
	return names
}

// TestSecurityCopySourceIsReadAsTheStoreReadsIt (issue 23, item 4):
// s3cond cut x-amz-copy-source at its first '?', so alpha/a?/../b passed
// the key policy as alpha/a while versitygw, which decodes the whole value
// and cuts only at ?versionId=, copied alpha/b. s3cond now reads it as S3
// does and refuses it; nothing is copied. A plain copy still works.
func TestSecurityCopySourceIsReadAsTheStoreReadsIt(t *testing.T) {
	e := NewEnv(t, withAlphaOnlyKey())
	e.RequireProxy(t)
	rw := e.Client(t, e.RW)
	ctx := t.Context()
	CreateBucket(t, rw, "alpha")
	CreateBucket(t, rw, "secret")
	putBytes(t, ctx, rw, "alpha", "a", []byte("a"))
	putBytes(t, ctx, rw, "alpha", "b", []byte("b"))
	putBytes(t, ctx, rw, "secret", "s.txt", []byte("secret"))

	for _, src := range []string{"alpha/a?/../b", "alpha/a%3F/../b", "alpha/a?/../../secret/s.txt", "/alpha/a?x=1"} {
		resp := Do(t, e.Endpoint, alphaOnly, RawRequest{Method: http.MethodPut, Path: "/alpha/copy",
			Header: http.Header{"X-Amz-Copy-Source": {src}}})
		resp.RequireError(t, http.StatusBadRequest, "InvalidArgument")
		requireMissing(t, ctx, e.BackendClient(), "alpha", "copy")
	}

	resp := Do(t, e.Endpoint, alphaOnly, RawRequest{Method: http.MethodPut, Path: "/alpha/copy",
		Header: http.Header{"X-Amz-Copy-Source": {"alpha/b"}}})
	if resp.Status != http.StatusOK {
		t.Fatalf("a plain copy of alpha/b: %d %s", resp.Status, resp.Body)
	}
	if got := getBytes(t, ctx, rw, "alpha", "copy"); string(got) != "b" {
		t.Fatalf("alpha/copy = %q, want b", got)
	}
}
