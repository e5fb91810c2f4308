package proxy

import (
	"net/http"
	"net/url"
)

// Operation is the S3 API call a request makes. s3cond needs it for three
// decisions: whether the call writes (authorisation), whether it can carry
// write conditions (leases), and what to name it in logs and metrics.
type Operation int

// The S3 operations s3cond tells apart. Everything else is OtherRead or
// OtherWrite and is forwarded unchanged.
const (
	OtherRead Operation = iota
	OtherWrite
	ListBuckets
	CreateBucket
	DeleteBucket
	HeadBucket
	ListObjects
	ListObjectsV2
	ListMultipartUploads
	GetObject
	HeadObject
	PutObject
	CopyObject
	DeleteObject
	DeleteObjects
	CreateMultipartUpload
	UploadPart
	UploadPartCopy
	CompleteMultipartUpload
	AbortMultipartUpload
	ListParts
)

var operationNames = [...]string{
	OtherRead: "OtherRead", OtherWrite: "OtherWrite", ListBuckets: "ListBuckets",
	CreateBucket: "CreateBucket", DeleteBucket: "DeleteBucket", HeadBucket: "HeadBucket",
	ListObjects: "ListObjects", ListObjectsV2: "ListObjectsV2", ListMultipartUploads: "ListMultipartUploads",
	GetObject: "GetObject", HeadObject: "HeadObject", PutObject: "PutObject", CopyObject: "CopyObject",
	DeleteObject: "DeleteObject", DeleteObjects: "DeleteObjects", CreateMultipartUpload: "CreateMultipartUpload",
	UploadPart: "UploadPart", UploadPartCopy: "UploadPartCopy", CompleteMultipartUpload: "CompleteMultipartUpload",
	AbortMultipartUpload: "AbortMultipartUpload", ListParts: "ListParts",
}

func (o Operation) String() string { return operationNames[o] }

// Writes reports whether the operation changes state, so needs a read-write key.
func (o Operation) Writes() bool {
	switch o {
	case OtherWrite, CreateBucket, DeleteBucket, PutObject, CopyObject, DeleteObject, DeleteObjects,
		CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload, AbortMultipartUpload:
		return true
	}
	return false
}

// subresources that make a bucket- or object-level request something other
// than the plain operation (ACLs, tagging, policies, ...). They are
// forwarded as OtherRead/OtherWrite.
func hasSubresource(q url.Values, names ...string) bool {
	for _, n := range names {
		if _, ok := q[n]; ok {
			return true
		}
	}
	return false
}

// classify names the operation of a request on bucket/key.
func classify(method, bucket, key string, q url.Values, h http.Header) Operation {
	other := OtherRead
	if method != http.MethodGet && method != http.MethodHead {
		other = OtherWrite
	}
	if bucket == "" {
		if method == http.MethodGet {
			return ListBuckets
		}
		return other
	}
	if key == "" {
		switch {
		case method == http.MethodPost && hasSubresource(q, "delete"):
			return DeleteObjects
		case method == http.MethodGet && hasSubresource(q, "uploads"):
			return ListMultipartUploads
		case hasOtherBucketSubresource(q):
			return other
		case method == http.MethodGet && q.Get("list-type") == "2":
			return ListObjectsV2
		case method == http.MethodGet:
			return ListObjects
		case method == http.MethodPut:
			return CreateBucket
		case method == http.MethodDelete:
			return DeleteBucket
		case method == http.MethodHead:
			return HeadBucket
		}
		return other
	}
	_, hasUploadID := q["uploadId"]
	switch method {
	case http.MethodGet:
		if hasUploadID {
			return ListParts
		}
		if hasSubresource(q, "acl", "tagging", "attributes", "retention", "legal-hold", "torrent") {
			return OtherRead
		}
		return GetObject
	case http.MethodHead:
		return HeadObject
	case http.MethodPut:
		if hasSubresource(q, "acl", "tagging", "retention", "legal-hold") {
			return OtherWrite
		}
		copySource := h.Get("X-Amz-Copy-Source") != ""
		switch {
		case hasUploadID && copySource:
			return UploadPartCopy
		case hasUploadID:
			return UploadPart
		case copySource:
			return CopyObject
		}
		return PutObject
	case http.MethodPost:
		switch {
		case hasSubresource(q, "uploads"):
			return CreateMultipartUpload
		case hasUploadID:
			return CompleteMultipartUpload
		}
		return OtherWrite
	case http.MethodDelete:
		switch {
		case hasUploadID:
			return AbortMultipartUpload
		case hasSubresource(q, "tagging"):
			return OtherWrite
		}
		return DeleteObject
	}
	return other
}

func hasOtherBucketSubresource(q url.Values) bool {
	return hasSubresource(q, "acl", "policy", "cors", "lifecycle", "versioning", "tagging", "location",
		"website", "logging", "notification", "replication", "encryption", "ownershipControls",
		"object-lock", "publicAccessBlock", "accelerate", "requestPayment", "versions", "analytics",
		"inventory", "metrics", "intelligent-tiering", "policyStatus")
}
