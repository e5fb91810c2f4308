package proxy

import "github.com/s3cond/s3cond/internal/operation"

// The request's operation and target, as internal/operation names them
// (route classifies each request there). The handlers switch on these
// names; they are the package's own, under the names the proxy always had.
type (
	Operation = operation.Operation
	target    = operation.Target
)

// maxKeyBytes is S3's limit on object key length.
const maxKeyBytes = operation.MaxKeyBytes

// The operations the proxy treats specially (internal/operation's allowlist.go).
const (
	ListBuckets             = operation.ListBuckets
	CreateBucket            = operation.CreateBucket
	DeleteBucket            = operation.DeleteBucket
	HeadBucket              = operation.HeadBucket
	ListObjects             = operation.ListObjects
	ListObjectsV2           = operation.ListObjectsV2
	ListObjectVersions      = operation.ListObjectVersions
	ListMultipartUploads    = operation.ListMultipartUploads
	GetObject               = operation.GetObject
	HeadObject              = operation.HeadObject
	PutObject               = operation.PutObject
	CopyObject              = operation.CopyObject
	DeleteObject            = operation.DeleteObject
	DeleteObjects           = operation.DeleteObjects
	PostObject              = operation.PostObject
	CreateMultipartUpload   = operation.CreateMultipartUpload
	UploadPart              = operation.UploadPart
	UploadPartCopy          = operation.UploadPartCopy
	CompleteMultipartUpload = operation.CompleteMultipartUpload
	AbortMultipartUpload    = operation.AbortMultipartUpload
	ListParts               = operation.ListParts
	PutBucketAcl            = operation.PutBucketAcl
	PreflightRequest        = operation.PreflightRequest
	Refused                 = operation.Refused
)

// checkBackendBucket refuses a client bucket that a backend maps to a name
// reserved for a store's admin API (operation.Classify checks the client's
// name).
func checkBackendBucket(b *Backend, bucket string) error {
	if bucket != "" && operation.IsReservedBucket(b.BackendBucket(bucket)) {
		return operation.ReservedBucketError(bucket)
	}
	return nil
}
