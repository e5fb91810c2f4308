package operation

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func TestClassify(t *testing.T) {
	copyHdr := http.Header{"X-Amz-Copy-Source": {"/b/k"}}
	preflightHdr := http.Header{"Origin": {"https://a.example"}, "Access-Control-Request-Method": {"PUT"}}
	cases := []struct {
		method, bucket, key, query string
		header                     http.Header
		want                       Operation
	}{
		{"GET", "", "", "", nil, ListBuckets},
		{"GET", "", "", "x-id=ListBuckets&max-buckets=10&continuation-token=t&prefix=a&bucket-region=us-east-1", nil, ListBuckets},
		{"PUT", "bkt", "", "", nil, CreateBucket},
		{"DELETE", "bkt", "", "", nil, DeleteBucket},
		{"HEAD", "bkt", "", "", nil, HeadBucket},
		{"GET", "bkt", "", "", nil, ListObjects},
		{"GET", "bkt", "", "list-type=2&prefix=a", nil, ListObjectsV2},
		{"GET", "bkt", "", "list-type=1", nil, ListObjects},
		{"GET", "bkt", "", "uploads", nil, ListMultipartUploads},
		{"GET", "bkt", "", "versions&key-marker=a", nil, ListObjectVersions},
		{"POST", "bkt", "", "delete", nil, DeleteObjects},
		{"POST", "bkt", "", "", http.Header{"Content-Type": {"multipart/form-data; boundary=xyz"}}, PostObject},
		{"GET", "bkt", "", "versioning", nil, "GetBucketVersioning"},
		{"PUT", "bkt", "", "policy", nil, "PutBucketPolicy"},
		{"DELETE", "bkt", "", "cors", nil, "DeleteBucketCors"},
		{"GET", "bkt", "", "location", nil, "GetBucketLocation"},
		{"GET", "bkt", "", "object-lock", nil, "GetObjectLockConfiguration"},
		{"GET", "bkt", "", "analytics&id=a&x-id=GetBucketAnalyticsConfiguration", nil, "GetBucketAnalyticsConfiguration"},
		{"GET", "bkt", "k", "", nil, GetObject},
		{"GET", "bkt", "k", "x-id=GetObject&versionId=v&response-content-type=a", nil, GetObject},
		{"HEAD", "bkt", "k", "partNumber=1", nil, HeadObject},
		{"PUT", "bkt", "k", "", nil, PutObject},
		{"PUT", "bkt", "k", "", copyHdr, CopyObject},
		{"PUT", "bkt", "k", "partNumber=1&uploadId=u", nil, UploadPart},
		{"PUT", "bkt", "k", "partNumber=1&uploadId=u", copyHdr, UploadPartCopy},
		{"PUT", "bkt", "k", "tagging", nil, "PutObjectTagging"},
		{"GET", "bkt", "k", "tagging", nil, "GetObjectTagging"},
		{"GET", "bkt", "k", "attributes", nil, "GetObjectAttributes"},
		{"PUT", "bkt", "k", "legal-hold", nil, "PutObjectLegalHold"},
		{"DELETE", "bkt", "k", "", nil, DeleteObject},
		{"DELETE", "bkt", "k", "tagging", nil, "DeleteObjectTagging"},
		{"DELETE", "bkt", "k", "uploadId=u", nil, AbortMultipartUpload},
		{"POST", "bkt", "k", "uploads", nil, CreateMultipartUpload},
		{"POST", "bkt", "k", "uploadId=u", nil, CompleteMultipartUpload},
		{"POST", "bkt", "k", "restore", nil, "RestoreObject"},
		{"POST", "bkt", "k", "select&select-type=2", nil, "SelectObjectContent"},
		{"GET", "bkt", "k", "uploadId=u&max-parts=2", nil, ListParts},
		{"PUT", "bkt", "k", "X-Amz-Meta-Owner=me&X-Amz-Signature=s", nil, PutObject},
		{"OPTIONS", "bkt", "", "", preflightHdr, PreflightRequest},
		{"OPTIONS", "bkt", "k", "", preflightHdr, PreflightRequest},
		// A preflight of a presigned UploadPart goes to its URL.
		{"OPTIONS", "bkt", "k", "partNumber=1&uploadId=u&X-Amz-Signature=s", preflightHdr, PreflightRequest},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		h := c.header
		if h == nil {
			h = http.Header{}
		}
		got, err := Classify(c.method, Target{Bucket: c.bucket, Key: c.key}, q, h)
		if err != nil || got != c.want {
			t.Errorf("%s /%s/%s?%s = %v, %v; want %v", c.method, c.bucket, c.key, c.query, got, err, c.want)
		}
	}
}

// TestClassifyRefuses pins down the allow-list's other side: what s3cond
// answers itself, for requests that are no S3 operation it knows. Before
// the allow-list, each of these was forwarded, re-signed as the store.
func TestClassifyRefuses(t *testing.T) {
	copyHdr := http.Header{"X-Amz-Copy-Source": {"/b/k"}}
	preflightHdr := http.Header{"Origin": {"https://a.example"}, "Access-Control-Request-Method": {"PUT"}}
	cases := []struct {
		method, bucket, key, query string
		header                     http.Header
		code                       s3err.Code
	}{
		// versitygw's admin API on the S3 port.
		{"PATCH", "create-user", "", "", nil, s3err.MethodNotAllowed},
		{"PATCH", "list-users", "", "", nil, s3err.MethodNotAllowed},
		{"PATCH", "bkt", "create", "", nil, s3err.MethodNotAllowed},
		// OPTIONS is only a CORS preflight, which names its origin and method.
		{"OPTIONS", "bkt", "k", "", nil, s3err.BadRequest},
		{"OPTIONS", "bkt", "", "", http.Header{"Origin": {"https://a.example"}}, s3err.BadRequest},
		{"OPTIONS", "", "", "", preflightHdr, s3err.NotImplemented},
		{"OPTIONS", "bkt", "k", "session", preflightHdr, s3err.NotImplemented},
		{"PROPFIND", "", "", "", nil, s3err.MethodNotAllowed},
		// MinIO's and Ceph RGW's admin APIs look like object calls.
		{"GET", "minio", "admin/v3/info", "", nil, s3err.InvalidBucketName},
		{"PUT", "admin", "user", "uid=u", nil, s3err.InvalidBucketName},
		{"GET", ".minio.sys", "config/config.json", "", nil, s3err.InvalidBucketName},
		// Service-level calls other than ListBuckets (RGW's STS/IAM is POST /).
		{"POST", "", "", "", nil, s3err.NotImplemented},
		{"PUT", "", "", "", nil, s3err.NotImplemented},
		{"GET", "", "", "acl", nil, s3err.NotImplemented},
		// Unknown subresources and parameters, wrong case included.
		{"GET", "bkt", "", "session", nil, s3err.NotImplemented},
		{"PUT", "bkt", "k", "renameobject", nil, s3err.NotImplemented},
		{"PUT", "bkt", "", "replication-reset", nil, s3err.NotImplemented},
		{"POST", "bkt", "k", "UPLOADS", nil, s3err.NotImplemented},
		{"PUT", "bkt", "k", "Tagging", nil, s3err.NotImplemented},
		{"GET", "bkt", "k", "events=s3:ObjectCreated:*", nil, s3err.NotImplemented},
		// A subresource on the wrong level or with the wrong method.
		{"POST", "bkt", "k", "delete", nil, s3err.NotImplemented},
		{"POST", "bkt", "", "uploads", nil, s3err.NotImplemented},
		{"DELETE", "bkt", "", "versioning", nil, s3err.NotImplemented},
		{"PUT", "bkt", "", "location", nil, s3err.NotImplemented},
		// A bucket POST is a browser upload only as multipart/form-data (S3's 412).
		{"POST", "bkt", "", "", nil, s3err.PreconditionFailed},
		{"POST", "bkt", "", "", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, s3err.PreconditionFailed},
		{"POST", "bkt", "k", "", nil, s3err.NotImplemented},
		// Two subresources: which one the store acts on is its choice.
		{"PUT", "bkt", "k", "acl&tagging", nil, s3err.NotImplemented},
		{"POST", "bkt", "k", "uploads&uploadId=u", nil, s3err.NotImplemented},
		// A copy source on a call that is no copy, or hoisted into the query.
		{"PUT", "bkt", "k", "tagging", copyHdr, s3err.InvalidRequest},
		{"GET", "bkt", "k", "", copyHdr, s3err.InvalidRequest},
		{"PUT", "bkt", "k", "x-amz-copy-source=%2Fsecret%2Fk", nil, s3err.NotImplemented},
		// An object without a bucket ("//k").
		{"GET", "", "k", "", nil, s3err.InvalidURI},
	}
	for _, c := range cases {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		h := c.header
		if h == nil {
			h = http.Header{}
		}
		got, err := Classify(c.method, Target{Bucket: c.bucket, Key: c.key}, q, h)
		if got != Refused || !s3err.Is(err, c.code) {
			t.Errorf("%s /%s/%s?%s = %v, %v; want Refused with %s", c.method, c.bucket, c.key, c.query, got, err, c.code)
		}
	}
}

func TestOperationWrites(t *testing.T) {
	for op, want := range map[Operation]bool{
		ListBuckets: false, GetObject: false, HeadObject: false, ListObjectsV2: false, "GetBucketPolicy": false,
		"SelectObjectContent": false, Refused: false, PreflightRequest: false,
		PutObject: true, CopyObject: true, UploadPartCopy: true, DeleteObjects: true, "PutBucketPolicy": true,
		"DeleteObjectTagging": true, "RestoreObject": true, "PutObjectAcl": true,
	} {
		if got := op.Writes(); got != want {
			t.Errorf("%s.Writes() = %v, want %v", op, got, want)
		}
	}
}
