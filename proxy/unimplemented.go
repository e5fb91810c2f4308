package proxy

import (
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// The refusals of docs/spec.md §7's table: request headers that ask S3 for
// a different write (a rename, a retention, an encryption with
// the client's key, a condition on something s3cond does not check) and
// that s3cond does not implement. A store that does not know one ignores
// it and does a plain write, answering 200 to a client that asked for
// something else, so s3cond answers S3's own 501 for an unsupported header
// and sends nothing. Headers not listed here are forwarded (the table says
// why that is safe for each write-changing one). A row leaves this list
// when s3cond implements it, and the table's row says "implemented".

// unimplementedHeader is one refused row: the header, and the operations
// whose meaning it changes. On other operations S3 ignores the header, and
// so does s3cond. (RenameObject, PUT ?renameObject, reads its own headers:
// rename.go. On a plain PutObject they ask for a rename the PUT is not.)
type unimplementedHeader struct {
	name string // as S3 spells it, lower case
	ops  []operation.Operation
	// keptBy, if set, names the store capability (Backend.StoreKeeps)
	// under which the row is forwarded: a start-up check found the store
	// honours the header. Elsewhere it is refused.
	keptBy string
}

// The store capabilities behind the table's "501 or forwarded" rows, as
// the start-up checks (internal/probe) find them.
const (
	KeepsObjectLock         = "object_lock"
	KeepsMPUObjectSize      = "mpu_object_size"
	KeepsAbortInitiatedTime = "abort_if_match_initiated_time"
)

// The operation sets of the rows.
var (
	putOnly      = []operation.Operation{operation.PutObject}
	objectWrites = []operation.Operation{operation.PutObject, operation.CopyObject, operation.CreateMultipartUpload}
	// dataWrites are the calls that carry an object's SSE-C key.
	dataWrites = append(objectWrites[:len(objectWrites):len(objectWrites)],
		operation.UploadPart, operation.UploadPartCopy, operation.CompleteMultipartUpload)
	copies = []operation.Operation{operation.CopyObject, operation.UploadPartCopy}
)

var unimplementedHeaders = []unimplementedHeader{
	// RenameObject's source, its conditions and idempotency token on a
	// plain PUT (no ?renameObject): a store that ignores them writes an
	// empty object under the new name.
	{"x-amz-rename-source", putOnly, ""},
	{"x-amz-rename-source-if-match", putOnly, ""},
	{"x-amz-rename-source-if-none-match", putOnly, ""},
	{"x-amz-rename-source-if-modified-since", putOnly, ""},
	{"x-amz-rename-source-if-unmodified-since", putOnly, ""},
	{"x-amz-client-token", putOnly, ""},
	// Object lock: a store without it keeps no retention and no hold, and
	// a later delete or overwrite succeeds where S3 refuses it. Forwarded
	// where the start-up check found the store keeps them (versitygw).
	{"x-amz-object-lock-mode", objectWrites, KeepsObjectLock},
	{"x-amz-object-lock-retain-until-date", objectWrites, KeepsObjectLock},
	{"x-amz-object-lock-legal-hold", objectWrites, KeepsObjectLock},
	{"x-amz-bucket-object-lock-enabled", []operation.Operation{operation.CreateBucket}, KeepsObjectLock},
	// SSE-C: a store that ignores the key stores the object in the clear
	// and serves it to requests without the key; s3cond's own HEADs of a
	// conditional write carry no key either.
	{"x-amz-server-side-encryption-customer-algorithm", dataWrites, ""},
	{"x-amz-server-side-encryption-customer-key", dataWrites, ""},
	{"x-amz-server-side-encryption-customer-key-md5", dataWrites, ""},
	{"x-amz-copy-source-server-side-encryption-customer-algorithm", copies, ""},
	{"x-amz-copy-source-server-side-encryption-customer-key", copies, ""},
	{"x-amz-copy-source-server-side-encryption-customer-key-md5", copies, ""},
	// Conditions s3cond does not check: the completed object's size, and
	// an abort only of the upload started at a given time. Forwarded where
	// the store was found to refuse a request whose condition fails.
	{"x-amz-mp-object-size", []operation.Operation{operation.CompleteMultipartUpload}, KeepsMPUObjectSize},
	{"x-amz-if-match-initiated-time", []operation.Operation{operation.AbortMultipartUpload}, KeepsAbortInitiatedTime},
}

// unimplementedHeaderKeys indexes the rows by canonical header key, built
// once: refuseUnimplemented runs on every request.
var unimplementedHeaderKeys = func() map[string]unimplementedHeader {
	keys := make(map[string]unimplementedHeader, len(unimplementedHeaders))
	for _, row := range unimplementedHeaders {
		keys[textproto.CanonicalMIMEHeaderKey(row.name)] = row
	}
	return keys
}()

// refuseUnimplemented answers 501 NotImplemented, naming the header, for a
// request of op to b that carries a refused header, as a header or hoisted
// into the query by a presigning SDK (x-amz-* parameters are headers to S3).
func refuseUnimplemented(b *Backend, op operation.Operation, h http.Header, q url.Values) error {
	for key := range h {
		if row, ok := unimplementedHeaderKeys[key]; ok && row.refusedOn(b, op) && !headerAsksForNothing(h, key) {
			return notImplementedHeader(row.name)
		}
	}
	for name, values := range q {
		key := textproto.CanonicalMIMEHeaderKey(name)
		if row, ok := unimplementedHeaderKeys[key]; ok && row.refusedOn(b, op) && !asksForNothing(key, values) {
			return notImplementedHeader(row.name)
		}
	}
	return nil
}

func (row unimplementedHeader) refusedOn(b *Backend, op operation.Operation) bool {
	return slices.Contains(row.ops, op) && !(row.keptBy != "" && b.StoreKeeps[row.keptBy])
}

// notImplementedHeader is S3's answer to a header it does not implement:
// its code, its message, and the header named in the error document.
func notImplementedHeader(name string) *s3err.Error {
	return s3err.New(s3err.NotImplemented).With("Header", strings.ToLower(name))
}
