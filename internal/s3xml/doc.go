// Package s3xml reads and writes the S3 XML bodies s3cond has to look
// inside, and is the one place the proxy reads XML: DeleteObjects, whose
// request it parses to authorise every key and evaluate per-key
// conditions, and whose backend result it merges with the per-key errors
// s3cond decided itself; CompleteMultipartUpload, whose part list it
// checks and writes anew for the store; the backend's one-level documents
// it rewrites for the client (FlatDocument: every error, and
// CompleteMultipartUpload's result); ListBuckets, which it filters to the
// key's buckets; the head of a listing, where it renames the bucket
// (ElementText); a ListParts answer's checksum algorithm; and a POST
// form's tagging document; every configuration body (ReadConfiguration,
// configuration.go), for what it names beyond its bucket, and a bucket
// policy, the one JSON body (ReadPolicy, policy.go). Besides, RewriteIdentities renames the
// principals of any S3 document as it streams (identities.go). Every other
// body (CopyObject among them) streams through unread.
//
// Documents s3cond only writes, never reads, are encoded where they are
// answered: s3err's error documents and POST Object's PostResponse
// (proxy/postobject_response.go).
//
// Every reader is bounded: it never reads more than the limit it is given,
// rejects documents nested deeper than S3's schemas need, and accepts the
// S3 namespace or none. Client bodies that fail are MalformedXML (400), or
// IncompleteBody if they could not be read; backend bodies that fail are
// BadGateway (502), because the client did nothing wrong. An *s3err.Error
// returned by the body reader itself (a signature or checksum check) is
// passed through unchanged. A backend answering 200 with an <Error> document
// (which S3 may do for any long-running request) yields that error. The
// exceptions are the backend answers the proxy relays or consults
// (ParseFlatDocument, ParseListBuckets, ReadUploadChecksum): they return a
// plain error, or the <Error> as a document, and the caller chooses the
// client's answer; their size bounds are MaxBackendDocument and
// MaxListBucketsResult.
package s3xml

// Namespace is the XML namespace of S3 documents.
const Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// Limits S3 places on request contents.
const (
	MaxDeleteObjects = 1000
)

// Suggested body limits, used when a reader is given limit <= 0. They leave
// room for S3's maximum (1000 keys of 1024 bytes) with XML escaping.
const (
	DefaultDeleteRequestLimit int64 = 4 << 20
	DefaultDeleteResultLimit  int64 = 8 << 20
)
