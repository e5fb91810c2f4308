package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	mimemultipart "mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// presignedPost is what boto3's generate_presigned_post hands a web page.
type presignedPost struct {
	URL    string            `json:"url"`
	Fields map[string]string `json:"fields"`
}

// boto3PresignedPost runs scripts/presigned_post_boto3.py: a policy for keys
// under prefix, files of 1..maxSize bytes, Content-Type text/*, metadata
// owner=ann and success_action_status 201.
func boto3PresignedPost(t *testing.T, e *Env, bucket, prefix, maxSize string) presignedPost {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("scripts", "presigned_post_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := runClient(t, e.RW, t.TempDir(), "python3", script, e.Endpoint, bucket, prefix, maxSize)
	var post presignedPost
	if err := json.Unmarshal([]byte(out), &post); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	return post
}

// postAsBrowser submits the form as a browser does: the fields (key first,
// then in a stable order), then the file, last.
func postAsBrowser(t *testing.T, url string, fields map[string]string, fileName string, file []byte) (int, []byte) {
	t.Helper()
	names := make([]string, 0, len(fields))
	for name := range fields {
		if name != "key" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var body bytes.Buffer
	w := mimemultipart.NewWriter(&body)
	for _, name := range append([]string{"key"}, names...) {
		if err := w.WriteField(name, fields[name]); err != nil {
			t.Fatal(err)
		}
	}
	part, err := w.CreateFormFile("file", fileName)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(file)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

func withFields(base map[string]string, change map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range change {
		out[k] = v
	}
	return out
}

// A browser form upload made with boto3's generate_presigned_post stores
// the file with its metadata through s3cond; a form that breaks its policy
// stores nothing. What was stored is read from versitygw directly.
// s3cond only: versitygw v1.8.0 itself answers this form 201 but stores the
// file under the literal key "uploads/${filename}".
func TestPostObjectBrowserUpload(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	const bucket = "browser-uploads"
	CreateBucket(t, e.Client(t, e.RW), bucket)
	post := boto3PresignedPost(t, e, bucket, "uploads/", "1024")
	form := withFields(post.Fields, map[string]string{"Content-Type": "text/plain"})

	status, answer := postAsBrowser(t, post.URL, form, "notes.txt", []byte("hello from a web page"))
	var doc struct{ Bucket, Key, ETag, Location string }
	if err := xml.Unmarshal(answer, &doc); status != http.StatusCreated || err != nil {
		t.Fatalf("POST = %d %s (%v), want 201 PostResponse", status, answer, err)
	}
	if doc.Bucket != bucket || doc.Key != "uploads/notes.txt" || doc.ETag == "" {
		t.Errorf("PostResponse %+v", doc)
	}
	stored, err := e.BackendClient().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("uploads/notes.txt")})
	if err != nil {
		t.Fatalf("the upload is not in the store: %v", err)
	}
	defer stored.Body.Close()
	body, _ := io.ReadAll(stored.Body)
	if string(body) != "hello from a web page" || stored.Metadata["owner"] != "ann" || aws.ToString(stored.ContentType) != "text/plain" ||
		aws.ToString(stored.ETag) != doc.ETag {
		t.Errorf("stored %q, metadata %v, type %q, ETag %q (answered %q)", body, stored.Metadata, aws.ToString(stored.ContentType), aws.ToString(stored.ETag), doc.ETag)
	}

	refused := []struct {
		name     string
		fields   map[string]string
		file     []byte
		status   int
		code     string
		fileName string
	}{
		{"too large for content-length-range", form, bytes.Repeat([]byte("x"), 1025), 400, "EntityTooLarge", "large.txt"},
		{"key outside the policy's prefix", withFields(form, map[string]string{"key": "elsewhere/${filename}"}), []byte("x"), 403, "AccessDenied", "moved.txt"},
		{"a field the policy does not name", withFields(form, map[string]string{"x-amz-meta-extra": "1"}), []byte("x"), 403, "AccessDenied", "extra.txt"},
		{"content type outside the policy", withFields(form, map[string]string{"Content-Type": "image/png"}), []byte("x"), 403, "AccessDenied", "image.txt"},
		{"signature of another policy", withFields(form, map[string]string{"x-amz-signature": strings.Repeat("ab", 32)}), []byte("x"), 403, "SignatureDoesNotMatch", "forged.txt"},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			status, answer := postAsBrowser(t, post.URL, r.fields, r.fileName, r.file)
			if status != r.status || !strings.Contains(string(answer), "<Code>"+r.code+"</Code>") {
				t.Fatalf("POST = %d %s, want %d %s", status, answer, r.status, r.code)
			}
			for _, key := range []string{"uploads/" + r.fileName, "elsewhere/" + r.fileName} {
				if _, err := e.BackendClient().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err == nil {
					t.Errorf("%s was stored", key)
				}
			}
		})
	}
}

// The same policy, the form encoded and posted by Python's requests, as a
// Python web client uploads: its multipart framing, not Go's.
func TestPostObjectWithPythonRequests(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	const bucket = "requests-uploads"
	CreateBucket(t, e.Client(t, e.RW), bucket)
	script, err := filepath.Abs(filepath.Join("scripts", "presigned_post_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.txt")
	content := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB: more than one read of the form
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	out := runClient(t, e.RW, dir, "python3", script, e.Endpoint, bucket, "reports/", "1048576", file)
	var answer struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil || answer.Status != http.StatusCreated {
		t.Fatalf("requests POST: %q (%v), want 201", out, err)
	}
	stored, err := e.BackendClient().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("reports/report.txt")})
	if err != nil {
		t.Fatalf("the upload is not in the store: %v", err)
	}
	defer stored.Body.Close()
	body, _ := io.ReadAll(stored.Body)
	if !bytes.Equal(body, content) || stored.Metadata["owner"] != "ann" {
		t.Errorf("stored %d bytes (want %d), metadata %v", len(body), len(content), stored.Metadata)
	}
}
