package proxy

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// Configuration bodies read against the grant. s3cond signs a bucket's
// replication, inventory, notification, policy or ACL with the store's own
// key, and a store that acts on it writes, sends or grants where the
// configuration says: to a destination bucket, a queue, a principal. So
// every configuration body is read (internal/s3xml, bounded) before it is
// forwarded, and whatever it names beyond the URL's bucket is checked
// against the client key's grant (configrefs.go). The body forwarded is
// the bytes read, never re-encoded. docs/security.md, "Configuration
// sub-resources", is this table for operators.

// Body limits: S3's documents are far smaller (a policy at most 20 KB, an
// ACL of 100 grants a few KiB); lifecycle and replication allow 1000 rules.
const (
	smallConfigBody int64 = 64 << 10
	largeConfigBody int64 = 1 << 20
	// websiteConfigBody is S3's own bound on a website configuration
	// (128 KiB, answered with MaxMessageLengthExceeded; versitygw's
	// full-flow suite records it, PutBucketWebsite_request_too_large).
	websiteConfigBody int64 = 128 << 10
)

// configRule says how one operation's body is read and checked.
type configRule struct {
	schema s3xml.ConfigurationSchema
	// policy: the body is a JSON bucket policy (s3xml.ReadPolicy).
	policy bool
	// publicAccessBlock: the flags say whether the block is relaxed.
	publicAccessBlock bool
}

func document(root string, limit int64) configRule {
	return configRule{schema: s3xml.ConfigurationSchema{Roots: []string{root}, Limit: limit}}
}

// notificationTargets are the notification elements that send events
// outside the store: queues, topics, functions and the event bus. s3cond
// grants keys buckets only, so any of them is refused.
var notificationTargets = []string{
	"TopicConfiguration", "QueueConfiguration", "CloudFunctionConfiguration", "LambdaFunctionConfiguration",
	"EventBridgeConfiguration", "Topic", "Queue", "CloudFunction", "LambdaFunctionArn",
}

// publicAccessBlockFlags are the four switches of a public access block.
var publicAccessBlockFlags = []string{"BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"}

// configurationBodies: every operation of the allow-list that carries a
// configuration body. A PUT or POST that is neither here nor in
// streamedBodies is refused (checkConfigurationBody).
var configurationBodies = map[operation.Operation]configRule{
	"PutBucketAccelerateConfiguration": document("AccelerateConfiguration", smallConfigBody),
	operation.PutBucketAcl:             aclRule,
	"PutObjectAcl":                     aclRule,
	"PutBucketAnalyticsConfiguration": {schema: s3xml.ConfigurationSchema{Roots: []string{"AnalyticsConfiguration"}, Limit: smallConfigBody,
		BucketElements: []string{"Bucket"}, ForeignElements: []string{"BucketAccountId"}}},
	"PutBucketCors":                            document("CORSConfiguration", smallConfigBody),
	"PutBucketEncryption":                      document("ServerSideEncryptionConfiguration", smallConfigBody),
	"PutBucketIntelligentTieringConfiguration": document("IntelligentTieringConfiguration", smallConfigBody),
	"PutBucketInventoryConfiguration": {schema: s3xml.ConfigurationSchema{Roots: []string{"InventoryConfiguration"}, Limit: smallConfigBody,
		BucketElements: []string{"Bucket"}, ForeignElements: []string{"AccountId"}}},
	"PutBucketLifecycleConfiguration": document("LifecycleConfiguration", largeConfigBody),
	"PutBucketLogging": {schema: s3xml.ConfigurationSchema{Roots: []string{"BucketLoggingStatus"}, Limit: smallConfigBody,
		BucketElements: []string{"TargetBucket"}, Grantees: true}},
	"PutBucketMetricsConfiguration": {schema: s3xml.ConfigurationSchema{Roots: []string{"MetricsConfiguration"}, Limit: smallConfigBody,
		ForeignElements: []string{"AccessPointArn"}}},
	"PutBucketNotificationConfiguration": {schema: s3xml.ConfigurationSchema{Roots: []string{"NotificationConfiguration"},
		Limit: largeConfigBody, ForeignElements: notificationTargets}},
	"PutObjectLockConfiguration": document("ObjectLockConfiguration", smallConfigBody),
	"PutBucketOwnershipControls": document("OwnershipControls", smallConfigBody),
	"PutBucketPolicy":            {policy: true},
	"PutPublicAccessBlock": {publicAccessBlock: true, schema: s3xml.ConfigurationSchema{Roots: []string{"PublicAccessBlockConfiguration"},
		Limit: smallConfigBody, FlagElements: publicAccessBlockFlags}},
	"PutBucketReplication": {schema: s3xml.ConfigurationSchema{Roots: []string{"ReplicationConfiguration"}, Limit: largeConfigBody,
		BucketElements: []string{"Bucket"}, ForeignElements: []string{"Account", "AccessControlTranslation"}}},
	"PutBucketRequestPayment": document("RequestPaymentConfiguration", smallConfigBody),
	"PutBucketTagging":        document("Tagging", smallConfigBody),
	"PutBucketVersioning":     document("VersioningConfiguration", smallConfigBody),
	"PutBucketWebsite": {schema: s3xml.ConfigurationSchema{Roots: []string{"WebsiteConfiguration"},
		Limit: websiteConfigBody, LimitIsS3s: true}},
	"PutObjectLegalHold":   document("LegalHold", smallConfigBody),
	"PutObjectRetention":   document("Retention", smallConfigBody),
	"PutObjectTagging":     document("Tagging", smallConfigBody),
	operation.CreateBucket: document("CreateBucketConfiguration", smallConfigBody),
	// A restore may write its output to another bucket, with grants.
	"RestoreObject": {schema: s3xml.ConfigurationSchema{Roots: []string{"RestoreRequest"}, Limit: smallConfigBody,
		BucketElements: []string{"BucketName"}, Grantees: true}},
	"SelectObjectContent": document("SelectObjectContentRequest", largeConfigBody),
}

var aclRule = configRule{schema: s3xml.ConfigurationSchema{Roots: []string{"AccessControlPolicy"}, Limit: maxACLBody, Grantees: true}}

// streamedBodies are the writes whose bodies are objects or are read
// elsewhere (DeleteObjects, CompleteMultipartUpload, a POST form), or
// that carry none.
var streamedBodies = map[operation.Operation]bool{
	operation.PutObject: true, operation.UploadPart: true, operation.CopyObject: true, operation.UploadPartCopy: true,
	operation.CompleteMultipartUpload: true, operation.DeleteObjects: true, operation.PostObject: true,
	operation.CreateMultipartUpload: true,
	// A rename forwards no request of the client's: its body, if any, is
	// never sent (rename.go).
	operation.RenameObject: true,
}

// checkConfiguration reads and checks what a verified, authorised request
// configures: its ACL headers, and its configuration body, which is kept
// to be forwarded (c.configBody). A write with a body s3cond does not
// read is refused with 501, never forwarded unread.
func (p *Proxy) checkConfiguration(c *call) error {
	aclHeaders, err := requestACLHeaders(c)
	if err != nil {
		return err
	}
	if err := p.checkACLHeaders(c, aclHeaders); err != nil {
		return err
	}
	if c.op == "DeletePublicAccessBlock" {
		return p.requirePublic(c, nil, "Removing the public access block")
	}
	if c.r.Method != http.MethodPut && c.r.Method != http.MethodPost || streamedBodies[c.op] {
		return nil
	}
	rule, known := configurationBodies[c.op]
	if !known {
		return s3err.Newf(s3err.NotImplemented, "s3cond does not read the body of %s, so it does not forward it.", c.op)
	}
	if c.auth.Body.Length() == 0 {
		return nil // nothing named; the store answers for a body it requires
	}
	if rule.policy {
		policy, err := s3xml.ReadPolicy(c.auth.Body)
		if err != nil {
			return err
		}
		c.configBody = policy.Body
		return p.checkPolicy(c, policy)
	}
	found, err := s3xml.ReadConfiguration(c.auth.Body, rule.schema)
	if err != nil {
		return err
	}
	c.configBody = found.Body
	return p.checkFound(c, rule, found)
}

// requestACLHeaders gathers a request's ACL headers (x-amz-acl,
// x-amz-grant-*) from its headers and from its query: a presigned URL
// carries them as query parameters, and a store acts on them there too.
// One given twice, in either place or in both, is refused: which of the
// two a store obeys is its choice, and the check must read the one it
// obeys.
func requestACLHeaders(c *call) (http.Header, error) {
	// Every request passes here: nothing is allocated unless it names an
	// ACL header (a map only then, names lowered only when they match).
	var out http.Header
	add := func(name string, values []string) {
		if !isACLName(name) {
			return
		}
		if out == nil {
			out = http.Header{}
		}
		key := http.CanonicalHeaderKey(name)
		out[key] = append(out[key], values...)
	}
	for name, values := range c.r.Header {
		add(name, values)
	}
	for name, values := range c.parsedQuery {
		add(name, values)
	}
	for name, values := range out {
		if len(values) > 1 {
			lower := strings.ToLower(name)
			return nil, argumentError("The header "+lower+" is given more than once (as a header or a query parameter)", lower, values[0])
		}
	}
	return out, nil
}

// isACLName reports whether name, in any case, is a canned ACL or a grant.
func isACLName(name string) bool {
	const grant = "x-amz-grant-"
	return strings.EqualFold(name, "x-amz-acl") ||
		len(name) >= len(grant) && strings.EqualFold(name[:len(grant)], grant)
}

// configBodySpec is the spec for sending a configuration body as read:
// the same bytes the client signed, with their hash and Content-MD5 (which
// stores require on several configuration PUTs) computed anew.
func configBodySpec(body []byte) forwardSpec {
	return forwardSpec{
		body: bytes.NewReader(body), length: int64(len(body)), payloadSHA256: sha256Hex(body),
		header: http.Header{"Content-Md5": {contentMD5(body)}},
	}
}
