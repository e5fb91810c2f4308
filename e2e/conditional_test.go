package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// leaseStores runs fn once with the embedded lease store and once with a
// DynamoDB table on moto, both in front of versitygw, and once more with
// the embedded lease store in front of s3rver, which ignores conditional
// headers: there every 412 and 404 comes from s3cond alone.
func leaseStores(t *testing.T, fn func(t *testing.T, e *Env)) {
	t.Run("embedded", func(t *testing.T) { fn(t, NewEnv(t)) })
	t.Run("dynamodb", func(t *testing.T) {
		if TargetMode() == ModeDirect {
			fn(t, NewEnv(t)) // versitygw has no lease table; run once more as is
			return
		}
		fn(t, NewEnv(t, WithDynamoDBLeases(testservers.StartMoto(t))))
	})
	t.Run("s3rver", func(t *testing.T) {
		if TargetMode() == ModeDirect {
			t.Skip("s3rver has no conditional writes of its own; S3COND_E2E_TARGET=direct checks versitygw only")
		}
		fn(t, NewEnv(t, WithBackend(BackendS3rver)))
	})
}

// condRow is one row of SPEC §2: headers sent, whether the key exists first,
// and the outcome.
type condRow struct {
	name      string
	exists    bool
	headers   map[string]string // values: "{etag}", "{bare}", "{weak}", "{other}" or literal
	status    int               // 200 (or 204 for DELETE) means the write happens
	code      string
	condition string // the <Condition> element of a 412
}

// versitygwDiffers lists rows versitygw answers differently from S3; they
// are skipped in ModeDirect, with this explanation.
var versitygwDiffers = map[string]string{
	"If-Match same etag weak":               "versitygw does not strip W/",
	"If-Match * on existing":                "versitygw compares * as an ETag",
	"DeleteObject/If-Match etag on missing": "versitygw deletes a missing key with 204",
	"DeleteObject/If-Match * on missing":    "versitygw deletes a missing key with 204",
}

const otherETag = `"0123456789abcdef0123456789abcdef"`

var writeRows = []condRow{
	{"If-None-Match * on existing", true, map[string]string{"If-None-Match": "*"}, 412, "PreconditionFailed", "If-None-Match"},
	{"If-None-Match * on missing", false, map[string]string{"If-None-Match": "*"}, 200, "", ""},
	{"If-Match etag on missing", false, map[string]string{"If-Match": otherETag}, 404, "NoSuchKey", ""},
	{"If-Match other etag", true, map[string]string{"If-Match": "{other}"}, 412, "PreconditionFailed", "If-Match"},
	{"If-Match same etag", true, map[string]string{"If-Match": "{etag}"}, 200, "", ""},
	{"If-Match same etag unquoted", true, map[string]string{"If-Match": "{bare}"}, 200, "", ""},
	{"If-Match same etag weak", true, map[string]string{"If-Match": "{weak}"}, 200, "", ""},
	{"If-Match * on missing", false, map[string]string{"If-Match": "*"}, 404, "NoSuchKey", ""},
	{"If-Match * on existing", true, map[string]string{"If-Match": "*"}, 200, "", ""},
	{"If-None-Match etag", true, map[string]string{"If-None-Match": "{etag}"}, 501, "NotImplemented", ""},
	{"both headers", true, map[string]string{"If-Match": "{etag}", "If-None-Match": "*"}, 501, "NotImplemented", ""},
}

var deleteRows = []condRow{
	{"If-Match same etag", true, map[string]string{"If-Match": "{etag}"}, 204, "", ""},
	{"If-Match other etag", true, map[string]string{"If-Match": "{other}"}, 412, "PreconditionFailed", "If-Match"},
	{"If-Match etag on missing", false, map[string]string{"If-Match": otherETag}, 404, "NoSuchKey", ""},
	{"If-Match * on existing", true, map[string]string{"If-Match": "*"}, 204, "", ""},
	{"If-Match * on missing", false, map[string]string{"If-Match": "*"}, 404, "NoSuchKey", ""},
}

// condOp performs one conditional operation on key and returns the response
// and the bytes the key must hold if the operation succeeded.
type condOp func(t *testing.T, e *Env, key string, headers http.Header) (*RawResponse, []byte)

// TestConditionalRows checks every row of SPEC §2 with raw requests (exact
// status, code and <Condition>), then what the key holds afterwards.
func TestConditionalRows(t *testing.T) {
	leaseStores(t, func(t *testing.T, e *Env) {
		c := e.Client(t, e.RW)
		CreateBucket(t, c, "cond")
		putBytes(t, t.Context(), c, "cond", "copy-source", []byte("copied body"))
		ops := map[string]condOp{"PutObject": rawPut, "CopyObject": rawCopy, "CompleteMultipartUpload": rawComplete}
		for _, opName := range []string{"PutObject", "CopyObject", "CompleteMultipartUpload"} {
			for i, row := range writeRows {
				t.Run(opName+"/"+row.name, func(t *testing.T) {
					if e.Mode == ModeDirect && opName == "CopyObject" {
						t.Skip("versitygw has no conditional CopyObject")
					}
					checkRow(t, e, fmt.Sprintf("%s-%d", opName, i), row, ops[opName])
				})
			}
		}
		for i, row := range deleteRows {
			t.Run("DeleteObject/"+row.name, func(t *testing.T) {
				checkRow(t, e, fmt.Sprintf("DeleteObject-%d", i), row, rawDelete)
			})
		}
	})
}

func checkRow(t *testing.T, e *Env, key string, row condRow, op condOp) {
	if e.Mode == ModeDirect {
		opRow := strings.SplitN(key, "-", 2)[0] + "/" + row.name
		for _, k := range []string{row.name, opRow} {
			if why, ok := versitygwDiffers[k]; ok {
				t.Skip(why)
			}
		}
	}
	ctx := t.Context()
	c := e.Client(t, e.RW)
	var old []byte
	etag := otherETag
	if row.exists {
		old = []byte("old body of " + key)
		etag = aws.ToString(putBytes(t, ctx, c, "cond", key, old).ETag)
	}
	h := http.Header{}
	for name, v := range row.headers {
		v = strings.NewReplacer("{etag}", etag, "{bare}", strings.Trim(etag, `"`), "{weak}", "W/"+etag, "{other}", otherETag).Replace(v)
		h.Set(name, v)
	}
	resp, written := op(t, e, key, h)
	if row.status < 300 {
		if resp.Status != row.status {
			t.Fatalf("want %d, got %d: %s", row.status, resp.Status, resp.Body)
		}
	} else {
		doc := resp.RequireError(t, row.status, row.code)
		if row.condition != "" && doc.Condition != row.condition {
			t.Errorf("<Condition> = %q, want %q", doc.Condition, row.condition)
		}
	}
	if resp.Header.Get("X-Amz-Request-Id") == "" {
		t.Errorf("no x-amz-request-id")
	}
	switch {
	case row.status < 300 && written != nil:
		if got := getBytes(t, ctx, c, "cond", key); !bytes.Equal(got, written) {
			t.Errorf("after success the key holds %q, want %q", got, written)
		}
	case row.status < 300: // a delete
		requireMissing(t, ctx, c, "cond", key)
	case row.exists:
		if got := getBytes(t, ctx, c, "cond", key); !bytes.Equal(got, old) {
			t.Errorf("after %d the key holds %q, want the old %q", row.status, got, old)
		}
	default:
		requireMissing(t, ctx, c, "cond", key)
	}
}

func rawPut(t *testing.T, e *Env, key string, h http.Header) (*RawResponse, []byte) {
	body := []byte("new body of " + key)
	return Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/cond/" + key, Header: h, Body: body}), body
}

func rawCopy(t *testing.T, e *Env, key string, h http.Header) (*RawResponse, []byte) {
	h.Set("X-Amz-Copy-Source", "/cond/copy-source")
	return Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/cond/" + key, Header: h}), []byte("copied body")
}

func rawDelete(t *testing.T, e *Env, key string, h http.Header) (*RawResponse, []byte) {
	return Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodDelete, Path: "/cond/" + key, Header: h}), nil
}

func rawComplete(t *testing.T, e *Env, key string, h http.Header) (*RawResponse, []byte) {
	ctx := t.Context()
	c := e.Client(t, e.RW)
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cond"), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("create multipart upload: %v", err)
	}
	body := []byte("multipart body of " + key)
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cond"), Key: aws.String(key), UploadId: created.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("upload part: %v", err)
	}
	t.Cleanup(func() {
		// A failed completion leaves the upload open, as on S3.
		_, _ = e.BackendClient().AbortMultipartUpload(t.Context(), &s3.AbortMultipartUploadInput{Bucket: aws.String("cond"),
			Key: aws.String(key), UploadId: created.UploadId})
	})
	xml := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, aws.ToString(part.ETag))
	return Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPost, Path: "/cond/" + key,
		Query: url.Values{"uploadId": {aws.ToString(created.UploadId)}}, Header: h, Body: []byte(xml)}), body
}
