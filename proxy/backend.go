package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// Backend is the S3-compatible storage behind s3cond.
type Backend struct {
	// Name identifies the backend in logs and errors.
	Name string
	// Endpoint is the storage's base URL.
	Endpoint *url.URL
	// VirtualHosted addresses buckets as <bucket>.<endpoint host>.
	VirtualHosted bool
	// Buckets maps a client bucket name to the backend's; names not in it
	// are kept.
	Buckets map[string]string
	// Client sends requests to the backend. Its Transport must re-sign them
	// (sigv4.NewResigner); s3cond never forwards a client's signature.
	Client *http.Client
	// ForwardChecksums passes verified x-amz-checksum-* values on; otherwise
	// they are dropped after verification (stores that reject them).
	ForwardChecksums bool
	// ForwardPayloadHash sends the client's signed hex SHA-256 of a body on
	// to the backend, which then hashes the body again. Otherwise s3cond,
	// having verified it, sends UNSIGNED-PAYLOAD, as for streaming uploads.
	ForwardPayloadHash bool
	// FramedBodies sends PutObject bodies (leased or not) as aws-chunked
	// streams with a CRC32 trailer that are finished only once the body
	// verified and the write may land (framedbody.go), so an abort does not
	// depend on a TCP reset reaching the store. Only for stores that read
	// such streams and refuse an unfinished one.
	FramedBodies bool
	// StoreKeeps holds the capabilities (KeepsObjectLock, ...) start-up
	// checks found the store to honour: the headers of spec.md §7's "501
	// or forwarded" rows that need one are forwarded to it, and refused
	// with 501 otherwise.
	StoreKeeps map[string]bool
	// Mode returns how the store's conditional writes are served now
	// (native, hold-back or lease-first, and the conditions the store
	// still checks; leasedwrite.Mode). It is read once per request, so
	// internal/app may change its answer at run time. Nil: hold-back,
	// no store checks.
	Mode func() leasedwrite.Mode
	// KeyPolicy says which object keys may reach this store (keypolicy.go);
	// the zero value is KeyPolicyStrict.
	KeyPolicy KeyPolicy
	// Identity are the names the store gives s3cond's own principal in
	// Owner, Initiator and Grantee elements (versitygw: the backend access
	// key ID). Clients see their own client-facing identity in their place
	// (clientidentity.go); the first is what that identity maps back to in
	// an ACL a client sets. Empty: answers are not rewritten for it.
	Identity []string
	// RefuseConditionalDeletes answers a DeleteObject with a condition,
	// and a DeleteObjects with a conditional entry, 501 NotImplemented
	// before anything reaches the store (backend.refuse_conditional_deletes:
	// the store's conditional delete is not atomic with its writes, and
	// the backend is served without leases).
	RefuseConditionalDeletes bool
	// CopyEmulation tunes the conditional CopyObject built from the
	// store's conditional writes where Mode says EmulateCopy
	// (emulatedcopy.go).
	CopyEmulation CopyEmulation
	// partCopyRefused: the store answered UploadPartCopy with 501 (s3rver),
	// so a large append rewrites the object instead (append_multipart.go).
	partCopyRefused atomic.Bool
}

// mode is the store's conditional mode for one request.
func (b *Backend) mode() leasedwrite.Mode {
	if b.Mode == nil {
		return leasedwrite.Mode{}
	}
	return b.Mode()
}

// BackendBucket maps a client bucket to the backend's name for it.
func (b *Backend) BackendBucket(bucket string) string {
	if mapped, ok := b.Buckets[bucket]; ok {
		return mapped
	}
	return bucket
}

// checkBackendBucket refuses a client bucket that a backend maps to a name
// reserved for a store's admin API (operation.Classify checks the client's
// name).
func checkBackendBucket(b *Backend, bucket string) error {
	if bucket != "" && operation.IsReservedBucket(b.BackendBucket(bucket)) {
		return operation.ReservedBucketError(bucket)
	}
	return nil
}

// URL builds the backend URL for bucket (client name) and rawKey (escaped as
// the client sent it), with rawQuery kept byte for byte.
func (b *Backend) URL(bucket, rawKey, rawQuery string) *url.URL {
	u := new(url.URL)
	b.setURL(u, bucket, rawKey, rawQuery)
	return u
}

// setURL is URL into u, storage of the caller's (call.backendURL).
func (b *Backend) setURL(u *url.URL, bucket, rawKey, rawQuery string) {
	*u = *b.Endpoint
	base := strings.TrimSuffix(u.EscapedPath(), "/")
	var rawPath string
	switch {
	case bucket == "":
		rawPath = base + "/"
	case b.VirtualHosted:
		u.Host = b.BackendBucket(bucket) + "." + u.Host
		rawPath = base + "/" + rawKey
	case rawKey == "":
		rawPath = base + "/" + url.PathEscape(b.BackendBucket(bucket))
	default:
		rawPath = base + "/" + url.PathEscape(b.BackendBucket(bucket)) + "/" + rawKey
	}
	u.RawPath = rawPath
	// rawKey was checked to unescape when the request was routed.
	u.Path, _ = url.PathUnescape(rawPath)
	u.RawQuery = rawQuery
}

// newRequest is a bodiless request of s3cond's own to the backend (a
// HEAD, a lookup on the error path), signed on its way by the re-signer.
// The URL is built once and the request is a literal: NewRequest would
// format the URL and parse it back. header may be nil.
func (b *Backend) newRequest(ctx context.Context, method, bucket, rawKey, rawQuery string, header http.Header) *http.Request {
	u := b.URL(bucket, rawKey, rawQuery)
	if header == nil {
		header = make(http.Header, 3) // the re-signer adds three
	}
	return (&http.Request{
		Method: method, URL: u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: http.NoBody,
	}).WithContext(ctx)
}

// head reads the current state of an object on the backend.
func (b *Backend) head(ctx context.Context, t operation.Target) (precondition.ObjectState, error) {
	resp, err := b.send(b.newRequest(ctx, http.MethodHead, t.Bucket, t.RawKey, "", nil))
	if err != nil {
		return precondition.ObjectState{}, backendError(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		return existingState(resp.Header), nil
	case resp.StatusCode == http.StatusNotFound:
		return precondition.ObjectState{}, nil
	case resp.StatusCode == http.StatusForbidden:
		return precondition.ObjectState{}, s3err.Newf(s3err.AccessDenied, "The backend refused s3cond's HEAD of the object.")
	default:
		return precondition.ObjectState{}, s3err.Newf(s3err.BadGateway, "The backend answered HEAD with status %d.", resp.StatusCode)
	}
}

// existingState is what a HEAD answered 200 says about the object: the
// ETag, and the size and modification time DeleteObject's conditions
// compare (-1 and zero when the header is missing or does not parse).
func existingState(h http.Header) precondition.ObjectState {
	size, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil {
		size = -1
	}
	modified, _ := http.ParseTime(h.Get("Last-Modified"))
	return precondition.ObjectState{Exists: true, ETag: h.Get("ETag"), Size: size, LastModified: modified}
}

// backendError turns a transport failure into the S3 error a client sees:
// 503 when the backend cannot be reached at all or does not answer in time
// (retrying later may work), 502 when it broke off mid-exchange. A
// request body that was not its declared length, or failed verification,
// is the client's error.
func backendError(err error) *s3err.Error {
	var s3e *s3err.Error
	if errors.As(bodyLengthError(err), &s3e) {
		return s3e
	}
	if errors.Is(err, context.Canceled) {
		return s3err.Wrap(s3err.InternalError, err)
	}
	if unreachable(err) {
		e := s3err.Newf(s3err.ServiceUnavailable, "The backend storage is unreachable.")
		e.Cause = err
		return e
	}
	return s3err.Wrap(s3err.BadGateway, err)
}

// unreachable reports whether err says the backend could not be reached:
// a failed dial or name lookup (backendhttp.ResettingDialer's and net/http's dials
// both return a *net.OpError with Op "dial"), or a timeout.
func unreachable(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
}

// send sends req to the backend and returns its answer as it is: s3cond
// passes redirects back to its client rather than following them (the
// production client refuses them too, with CheckRedirect).
//
// Why not Client.Do: for every request it clones the header map for the
// redirects it might follow and wraps the request in redirect bookkeeping,
// five allocations of a forwarded GET's ninety; a client with a Timeout or a
// cookie Jar still goes through Do, which implements them.
//
// req is given away: every caller builds it for this one call, so the
// re-signer may sign it in place (sigv4.OwnedRoundTripper).
func (b *Backend) send(req *http.Request) (*http.Response, error) {
	c := b.Client
	if c.Timeout != 0 || c.Jar != nil {
		return c.Do(req)
	}
	transport := c.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	if owned, ok := transport.(sigv4.OwnedRoundTripper); ok {
		return owned.RoundTripOwned(req)
	}
	return transport.RoundTrip(req)
}
