package operation

import "net/http"

// The operation allow-list: every S3 API call s3cond forwards, as the
// method, the path shape (service, bucket or object) and the subresource
// (the query parameter that names the call). s3cond signs what it forwards
// with the store's own, often root, credentials, so a request that matches
// no row here never reaches the store: a store-specific admin API on the S3
// port (versitygw's PATCH /create-user, MinIO's /minio/admin/...) would run
// as the store's administrator. docs/security.md lists the table for
// operators; keep the two in step.

// PathLevel is what a request path addresses: the service, a bucket or an
// object.
type PathLevel uint8

const (
	ServiceLevel PathLevel = iota // "/"
	BucketLevel                   // "/bucket"
	ObjectLevel                   // "/bucket/key"
)

// opRule is one row of the allow-list.
type opRule struct {
	level  PathLevel
	method string
	// sub is the subresource query parameter that selects the operation,
	// "" for the plain resource.
	sub string
	op  Operation
	// writes: the call changes state, so it needs a read-write grant.
	writes bool
}

// The operations s3cond itself treats specially (leases, authorisation of
// copy sources and DeleteObjects entries, ListBuckets filtering) are
// constants; the others exist only as names in the table.
const (
	ListBuckets          Operation = "ListBuckets"
	CreateBucket         Operation = "CreateBucket"
	DeleteBucket         Operation = "DeleteBucket"
	HeadBucket           Operation = "HeadBucket"
	ListObjects          Operation = "ListObjects"
	ListObjectsV2        Operation = "ListObjectsV2"
	ListObjectVersions   Operation = "ListObjectVersions"
	ListMultipartUploads Operation = "ListMultipartUploads"
	GetObject            Operation = "GetObject"
	HeadObject           Operation = "HeadObject"
	PutObject            Operation = "PutObject"
	CopyObject           Operation = "CopyObject"
	DeleteObject         Operation = "DeleteObject"
	DeleteObjects        Operation = "DeleteObjects"
	// RenameObject (PUT ?renameObject with x-amz-rename-source) is s3cond's
	// own: a leased copy then delete of the source (proxy/rename.go).
	RenameObject Operation = "RenameObject"
	// PostObject is a browser-based upload: a multipart/form-data POST to
	// the bucket, authenticated by a signed POST policy in the form.
	PostObject              Operation = "PostObject"
	CreateMultipartUpload   Operation = "CreateMultipartUpload"
	UploadPart              Operation = "UploadPart"
	UploadPartCopy          Operation = "UploadPartCopy"
	CompleteMultipartUpload Operation = "CompleteMultipartUpload"
	AbortMultipartUpload    Operation = "AbortMultipartUpload"
	ListParts               Operation = "ListParts"
	// PutBucketAcl may not set the ACL by headers and body at once (aclcontent.go).
	PutBucketAcl Operation = "PutBucketAcl"
	// PreflightRequest is a browser's CORS preflight (OPTIONS with Origin
	// and Access-Control-Request-Method), the one call s3cond forwards
	// unsigned: stripped to those headers (preflight.go).
	PreflightRequest Operation = "PreflightRequest"
	// Refused names a request that matched no row: it is answered 405 or
	// 501 by s3cond and counted under this name in the metrics.
	Refused Operation = "Refused"
)

// coreOperations are the plain object, bucket and multipart calls.
// PutObject and UploadPart become CopyObject and UploadPartCopy when the
// request carries x-amz-copy-source, and ListObjects becomes ListObjectsV2
// with list-type=2 (refine).
var coreOperations = []opRule{
	{ServiceLevel, http.MethodGet, "", ListBuckets, false},

	{BucketLevel, http.MethodPut, "", CreateBucket, true},
	{BucketLevel, http.MethodDelete, "", DeleteBucket, true},
	{BucketLevel, http.MethodHead, "", HeadBucket, false},
	{BucketLevel, http.MethodGet, "", ListObjects, false},
	{BucketLevel, http.MethodGet, "versions", ListObjectVersions, false},
	{BucketLevel, http.MethodGet, "uploads", ListMultipartUploads, false},
	{BucketLevel, http.MethodPost, "delete", DeleteObjects, true},
	{BucketLevel, http.MethodPost, "", PostObject, true},
	// A preflight's query string is the actual request's; Classify ignores
	// its subresource, and none of it is forwarded.
	{BucketLevel, http.MethodOptions, "", PreflightRequest, false},

	{ObjectLevel, http.MethodGet, "", GetObject, false},
	{ObjectLevel, http.MethodHead, "", HeadObject, false},
	{ObjectLevel, http.MethodPut, "", PutObject, true},
	{ObjectLevel, http.MethodDelete, "", DeleteObject, true},
	{ObjectLevel, http.MethodPut, "renameObject", RenameObject, true},
	{ObjectLevel, http.MethodPost, "uploads", CreateMultipartUpload, true},
	{ObjectLevel, http.MethodPut, "uploadId", UploadPart, true},
	{ObjectLevel, http.MethodPost, "uploadId", CompleteMultipartUpload, true},
	{ObjectLevel, http.MethodDelete, "uploadId", AbortMultipartUpload, true},
	{ObjectLevel, http.MethodGet, "uploadId", ListParts, false},
	{ObjectLevel, http.MethodPost, "restore", "RestoreObject", true},
	// SelectObjectContent is a POST that only reads the object.
	{ObjectLevel, http.MethodPost, "select", "SelectObjectContent", false},
	{ObjectLevel, http.MethodOptions, "", PreflightRequest, false},
}

// verbs says which of Get<Name>, Put<Name> and Delete<Name> S3 has for a
// configuration subresource.
type verbs uint8

const (
	get verbs = 1 << iota
	put
	del
	getPut       = get | put
	getPutDelete = get | put | del
)

// subresource is a bucket or object configuration: GET reads it, PUT and
// DELETE change it.
type subresource struct {
	name   string // the query parameter
	opName string // the operation name without its verb
	verbs  verbs
}

// bucketSubresources are the standard bucket configurations. The body of
// each PUT is read and what it names checked against the key's grant before
// it is forwarded (proxy/configbody.go, whose table must have a row for
// every PUT here: TestEveryWriteBodyIsRead; docs/security.md,
// "Configuration sub-resources").
var bucketSubresources = []subresource{
	{"accelerate", "BucketAccelerateConfiguration", getPut},
	{"acl", "BucketAcl", getPut},
	{"analytics", "BucketAnalyticsConfiguration", getPutDelete},
	{"cors", "BucketCors", getPutDelete},
	{"encryption", "BucketEncryption", getPutDelete},
	{"intelligent-tiering", "BucketIntelligentTieringConfiguration", getPutDelete},
	{"inventory", "BucketInventoryConfiguration", getPutDelete},
	{"lifecycle", "BucketLifecycleConfiguration", getPutDelete},
	{"location", "BucketLocation", get},
	{"logging", "BucketLogging", getPut},
	{"metrics", "BucketMetricsConfiguration", getPutDelete},
	{"notification", "BucketNotificationConfiguration", getPut},
	{"object-lock", "ObjectLockConfiguration", getPut},
	{"ownershipControls", "BucketOwnershipControls", getPutDelete},
	{"policy", "BucketPolicy", getPutDelete},
	{"policyStatus", "BucketPolicyStatus", get},
	{"publicAccessBlock", "PublicAccessBlock", getPutDelete},
	{"replication", "BucketReplication", getPutDelete},
	{"requestPayment", "BucketRequestPayment", getPut},
	{"tagging", "BucketTagging", getPutDelete},
	{"versioning", "BucketVersioning", getPut},
	{"website", "BucketWebsite", getPutDelete},
}

// objectSubresources are the per-object configurations.
var objectSubresources = []subresource{
	{"acl", "ObjectAcl", getPut},
	{"attributes", "ObjectAttributes", get},
	{"legal-hold", "ObjectLegalHold", getPut},
	{"retention", "ObjectRetention", getPut},
	{"tagging", "ObjectTagging", getPutDelete},
	{"torrent", "ObjectTorrent", get},
}

// ordinaryParameters are the S3 query parameters that refine an operation
// without naming another one (listing bounds, versions, response header
// overrides, ...). A request with a query parameter that is neither one of
// these nor a subresource of the table is refused: a store may give it a
// meaning s3cond cannot authorise. x-id is what AWS SDKs add to name the
// call; X-Amz-* parameters (presigned URLs, hoisted headers) are allowed by
// prefix.
var ordinaryParameters = newParameterSet(
	"bucket-region", "continuation-token", "delimiter", "encoding-type", "fetch-owner", "id",
	"key-marker", "list-type", "marker", "max-buckets", "max-keys", "max-parts", "max-uploads",
	"part-number-marker", "partNumber", "prefix", "response-cache-control",
	"response-content-disposition", "response-content-encoding", "response-content-language",
	"response-content-type", "response-expires", "select-type", "start-after", "upload-id-marker",
	"version-id-marker", "versionId", "x-id",
)

// reservedBuckets are first path segments that stores serve their own
// admin APIs under: MinIO (/minio/admin/..., /minio/health/...; .minio.sys
// holds its configuration) and Ceph RGW (rgw_admin_entry, /admin by
// default). With path-style addressing such a request looks like an object
// call on a bucket of that name, so s3cond serves no bucket by these names,
// neither as the client's name nor as the store's.
var reservedBuckets = map[string]bool{"minio": true, ".minio.sys": true, "admin": true}

// s3Methods are the HTTP methods of the S3 API (OPTIONS for CORS
// preflights); any other method is 405.
var s3Methods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPut: true, http.MethodPost: true, http.MethodDelete: true,
	http.MethodOptions: true,
}

func newParameterSet(names ...string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}
