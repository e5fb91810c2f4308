// Package proxy is s3cond's HTTP front: it authenticates S3 requests,
// classifies them, gives writes with If-Match / If-None-Match conditional
// semantics through leases, and forwards everything else, re-signed, to the
// backend storage.
//
// The path of a request is drawn once, in docs/architecture.md ("The
// request path"); TestRequestPathDocMatchesTheCode keeps it in step with
// serveS3 and the functions it calls.
package proxy

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// Authenticator checks a client's SigV4 signature and returns the verifying
// body. *sigv4.Verifier is the implementation.
type Authenticator interface {
	Verify(r *http.Request) (*sigv4.Request, error)
}

// Authorizer decides which buckets a client key may read or write.
// *access.Keyring is the implementation.
type Authorizer interface {
	Allowed(accessKeyID, bucket string, write bool) bool
}

var (
	_ Authenticator = (*sigv4.Verifier)(nil)
	_ http.Handler  = (*Proxy)(nil)
)

// Proxy serves the S3 API. Build it with New.
type Proxy struct {
	auth    Authenticator
	access  Authorizer
	backend *Backend
	// bucketBackends routes client buckets to backends other than backend.
	bucketBackends map[string]*Backend
	// leased runs conditional and strict-mode writes under their leases
	// (proxy/leasedwrite); nil without a lease store.
	leased *leasedwrite.Writer
	// receipts records writes' answers for their retries (receipt.go); nil
	// without a lease store.
	receipts *dynamolease.Committer
	// leaseOptions built leased (tests retune it).
	leaseOptions leasedwrite.Options
	domain       string
	log          zerolog.Logger
	// serializeAllWrites reports whether a client bucket is in strict mode.
	serializeAllWrites func(bucket string) bool
	// newRequestID makes the x-amz-request-id of each response.
	newRequestID func() string
	observer     RequestObserver
	handler      http.Handler
	// bodyIdleTimeout and writeIdleTimeout bound a client that stops
	// sending its body or reading its response (timeouts.go).
	bodyIdleTimeout, writeIdleTimeout time.Duration
	// anonymousRead reports whether unsigned clients may read a bucket.
	anonymousRead func(bucket string) bool
	// postFormTimeout bounds the whole form phase of POST Object.
	postFormTimeout time.Duration
	// admission holds the budgets of requests not yet verified
	// (unauthenticated.go).
	admission *admission
	// writePolicy is the buckets' write policies (writepolicy.go).
	writePolicy WritePolicy
}

// Options configure a Proxy.
type Options struct {
	Auth    Authenticator
	Access  Authorizer
	Backend *Backend
	// BucketBackends routes client buckets to further backends; buckets not
	// in it (and ListBuckets) go to Backend.
	BucketBackends map[string]*Backend
	// Leases serialises conditional writes. Nil means conditional writes
	// are refused with 501 unless the backend handles them natively.
	Leases *dynamolease.Committer
	// LeaseTimeout is the lease timeout Leases uses (SPEC §3: final bytes
	// are sent only while half of it remains). Default 20 s.
	LeaseTimeout time.Duration
	// MinStoreThroughput is the rate, in bytes per second, at which the
	// store is assumed to copy at least: a leased CopyObject or
	// CompleteMultipartUpload holds its lease for LeaseTimeout plus its
	// bytes at this rate (leasedwrite/size.go). Default
	// leasedwrite.DefaultMinStoreThroughput.
	MinStoreThroughput float64
	// Domain enables virtual-hosted-style requests (<bucket>.<Domain>).
	Domain string
	Log    zerolog.Logger
	// SerializeAllWrites reports whether every write to a client bucket takes
	// a lease (strict mode, lease.serialize: all-writes). Default: none does.
	SerializeAllWrites func(bucket string) bool
	// NewRequestID defaults to 16 random hex digits.
	NewRequestID func() string
	// Observer is told about every finished request (metrics). Default: nobody.
	Observer RequestObserver
	// BodyIdleTimeout is how long a request body may send nothing before
	// the request fails with 400 RequestTimeout; default
	// DefaultBodyIdleTimeout, negative: no bound.
	BodyIdleTimeout time.Duration
	// WriteIdleTimeout is how long a write of the response may make no
	// progress before the connection is cut; default
	// DefaultWriteIdleTimeout, negative: no bound.
	WriteIdleTimeout time.Duration
	// AnonymousRead reports whether unsigned clients may read a client
	// bucket (GetObject, HeadObject, ListObjects[V2]; config's anonymous
	// grant). Default: no bucket, so every unsigned request is 403.
	AnonymousRead func(bucket string) bool
	// PostFormTimeout bounds, in total, the reading of a POST Object form's
	// fields (before anything is authenticated); default
	// DefaultPostFormTimeout.
	PostFormTimeout time.Duration
	// MaxUnauthenticated caps the requests in flight that have not yet
	// passed signature or policy verification; past it, 503 SlowDown.
	// Default DefaultMaxUnauthenticated.
	MaxUnauthenticated int
	// WritePolicy names the buckets that refuse unconditional writes or
	// deletes, or take unconditional writes as creates. Default: none.
	WritePolicy WritePolicy
	// MaxUnauthenticatedPerSource caps those of one client address;
	// default DefaultMaxUnauthenticatedPerSource.
	MaxUnauthenticatedPerSource int
	// MaxSignatureChecks caps the requests claiming a signature that are
	// being verified; default DefaultMaxSignatureChecks.
	MaxSignatureChecks int
}

// New builds the proxy and its middleware chain.
func New(o Options) *Proxy {
	p := &Proxy{
		auth: o.Auth, access: o.Access, backend: o.Backend, bucketBackends: o.BucketBackends,
		domain: o.Domain, log: o.Log, newRequestID: o.NewRequestID,
		serializeAllWrites: o.SerializeAllWrites, observer: o.Observer, anonymousRead: o.AnonymousRead,
	}
	if p.anonymousRead == nil {
		p.anonymousRead = func(string) bool { return false }
	}
	if p.observer == nil {
		p.observer = nopObserver{}
	}
	if p.serializeAllWrites == nil {
		p.serializeAllWrites = func(string) bool { return false }
	}
	if o.Leases != nil {
		leasedObserver, _ := p.observer.(LeasedWriteObserver)
		p.leaseOptions = leasedwrite.Options{
			Leases: o.Leases, LeaseTimeout: o.LeaseTimeout, MinStoreThroughput: o.MinStoreThroughput,
			Log: o.Log, Observer: leasedObserver,
		}
		p.leased = leasedwrite.New(p.leaseOptions)
		p.receipts = o.Leases
	}
	if p.newRequestID == nil {
		p.newRequestID = randomRequestID
	}
	p.bodyIdleTimeout = orDefault(o.BodyIdleTimeout, DefaultBodyIdleTimeout)
	p.writeIdleTimeout = orDefault(o.WriteIdleTimeout, DefaultWriteIdleTimeout)
	p.postFormTimeout = orDefault(o.PostFormTimeout, DefaultPostFormTimeout)
	p.admission = newAdmission(o)
	p.writePolicy = o.WritePolicy.withDefaults()
	// Every method and path is serveS3's to classify (or refuse, in S3's
	// words), so there is nothing to route: the middleware chain alone. A
	// chi.Mux with a catch-all route cost four allocations per request (its
	// route context, a second request copy, the path value for "*") and
	// answered methods it does not know with its own plain-text 405.
	p.handler = chi.Chain(p.requestIDMiddleware, p.accessLogMiddleware, p.recoverMiddleware).HandlerFunc(p.serveS3)
	return p
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// maxSinglePut is S3's limit on one PutObject or UploadPart body (5 GiB).
const maxSinglePut = 5 << 30

// call is one client request as s3cond understands it.
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	id     string
	op     operation.Operation
	target operation.Target
	// backend serves target's bucket.
	backend *Backend
	auth    *sigv4.Request
	info    *requestInfo
	// parsedQuery is the client's query as route parsed it, to be checked.
	parsedQuery url.Values
	// query is the request's query after the value allow-list
	// (paramgrammar.go); the backend's query is built from it alone.
	query checkedQuery
	// checkedHeader holds the headers of headergrammar.go as they are sent on.
	checkedHeader http.Header
	// copySource is the parsed X-Amz-Copy-Source of a CopyObject or
	// UploadPartCopy (nil otherwise); the backend's header is built from it.
	copySource *copySource
	// admission is the slot the call holds among requests not yet
	// verified (unauthenticated.go); the zero slot when it holds none.
	admission slot
	// completeBody is the part list of a CompleteMultipartUpload as s3cond
	// rewrote it from the checked parts (completebody.go).
	completeBody []byte
	// configBody is a configuration body as checkConfiguration read and
	// checked it (configbody.go): what is forwarded.
	configBody []byte
	// copyAnswer is a leased CopyObject's answer as relayed, for its
	// receipt (receipt.go); nil when none is kept.
	copyAnswer *capturedAnswer
	// backendURL is the URL of the call's first outbound request, in the
	// call's own allocation (newBackendURL).
	backendURL     url.URL
	backendURLUsed bool
	// verified is storage for auth, in the request state, for a verifier
	// that fills the caller's (intoAuthenticator); nil without a state.
	verified *sigv4.Request
}

func (p *Proxy) serveS3(w http.ResponseWriter, r *http.Request) {
	c := newCall(w, r)
	// Until it is classified, a request is one s3cond refuses.
	c.info.set(func(i *requestInfo) { i.op = operation.Refused })
	if frontconn.Refused(r.Context()) {
		// Accepted past the connection cap: told to slow down, and closed.
		w.Header().Set("Connection", "close")
		p.fail(c, s3err.Newf(s3err.SlowDown, "Please reduce your request rate: too many connections are open."))
		return
	}
	if err := checkHeaderSection(r); err != nil {
		p.fail(c, err) // S3 looks at nothing else of such a request
		return
	}
	if err := operation.CheckRequestTarget(r); err != nil {
		p.fail(c, err) // a target a store could read another way: nothing more is read
		return
	}
	if !p.enterUnauthenticated(c) {
		return
	}
	defer p.leaveUnauthenticated(c)
	// S3's order: authentication first, then what the request addresses.
	// A request route refuses is still answered only after its signature
	// (neither step reaches the backend), so a SigV2 presigned URL gets
	// S3's 400 InvalidRequest, not 501 for its parameters.
	routeErr := p.route(c)
	if r.Method == http.MethodOptions {
		// A CORS preflight is never signed: browsers send it without
		// credentials, so its route errors are the answer.
		p.servePreflight(c, routeErr)
		return
	}
	if routeErr == nil && c.op == operation.PostObject {
		// A browser upload authenticates with its form, not its request.
		p.servePostObject(c)
		return
	}

	unlimited := r.Body
	p.limitBodyIdle(c)
	auth, err := p.verify(c)
	if err == nil && !auth.Anonymous {
		p.leaveUnauthenticated(c)
		frontconn.Authenticated(r.Context())
	}
	// An anonymous request is unauthenticated work until it is answered:
	// the deferred leave gives its slot back.
	// The verifying body reads through the idle timeout; what reads r.Body
	// itself from here on (drainUnreadBody) sets deadlines of its own.
	r.Body = unlimited
	if err != nil {
		p.fail(c, err)
		return
	}
	// The body is not closed here: net/http closes it after the handler, and
	// without waiting for a body the client held back (Expect: 100-continue)
	// when the answer needed none of it, such as a fail-fast 412.
	c.auth = auth
	c.info.set(func(i *requestInfo) { i.accessKeyID = auth.AccessKeyID })
	if err := p.admit(c, routeErr); err != nil {
		p.fail(c, err)
		return
	}
	p.serveVerified(c)
}

// serveVerified serves an authenticated, admitted request: the writes
// s3cond makes conditional, DeleteObjects, RenameObject and ListBuckets
// by s3cond's own handlers, everything else forwarded.
func (p *Proxy) serveVerified(c *call) {
	if err := p.checkCopySourceConditions(c); err != nil {
		p.fail(c, err)
		return
	}
	switch c.op {
	case operation.PutObject, operation.CopyObject, operation.CompleteMultipartUpload, operation.DeleteObject:
		if c.op == operation.PutObject && p.serveAppend(c) { // append.go
			return
		}
		if handled := p.serveConditional(c); handled {
			return
		}
	case operation.DeleteObjects:
		p.serveDeleteObjects(c)
		return
	case operation.RenameObject:
		p.serveRenameObject(c) // rename.go
		return
	case operation.ListBuckets:
		p.serveListBuckets(c)
		return
	}
	spec, err := p.aclBody(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	p.forward(c, spec)
}

// admit runs the checks of a verified request in S3's order, before
// anything reaches the backend: what route refused, the key's grant, the
// key policy, then the request's headers.
func (p *Proxy) admit(c *call, routeErr error) error {
	if routeErr != nil {
		return routeErr
	}
	if err := refuseStraySignatureV2Params(c); err != nil {
		return err
	}
	if err := p.authorise(c); err != nil {
		return err
	}
	if err := c.backend.KeyPolicy.Check(c.target.Key); err != nil {
		return err
	}
	if err := c.checkValues(); err != nil {
		return err
	}
	// An aws-chunked body is an upload's: S3 refuses it on every other
	// operation (s3cond would otherwise decode it and forward a plain body).
	if c.auth.Mode.Streaming() && c.op != operation.PutObject && c.op != operation.UploadPart {
		return s3err.Newf(s3err.InvalidRequest, "The value of x-amz-content-sha256 header is invalid.")
	}
	if err := checkACLContent(c); err != nil {
		return err
	}
	if err := requireLength(c); err != nil {
		return err
	}
	if length := c.auth.Body.Length(); (c.op == operation.PutObject || c.op == operation.UploadPart) && length > maxSinglePut {
		return s3err.New(s3err.EntityTooLarge).With("ProposedSize", strconv.FormatInt(length, 10)).
			With("MaxSizeAllowed", strconv.FormatInt(maxSinglePut, 10))
	}
	if c.op == operation.CompleteMultipartUpload {
		return c.checkCompleteBody()
	}
	return p.checkConfiguration(c)
}

// checkValues applies the value allow-list (paramgrammar.go,
// headergrammar.go) to a verified, authorised request, as S3 checks its
// arguments after the key's access: the checked query and headers are
// what forward sends.
func (c *call) checkValues() error {
	var err error
	if c.query, err = checkQueryWithoutCallName(c.parsedQuery, c.backend.KeyPolicy); err != nil {
		return err
	}
	if c.checkedHeader, err = checkHeaders(c.r.Header); err != nil {
		return err
	}
	// A well-formed header asking for a write s3cond does not implement is
	// S3's 501, never a plain write by a store that ignored it.
	return refuseUnimplemented(c.backend, c.op, c.r.Header, c.parsedQuery)
}

// route finds what the request addresses, the backend serving it and the
// S3 operation it makes. Whatever the allow-list does not know, and a
// Connection header that would remove a header, is refused here, before
// anything reaches the backend.
func (p *Proxy) route(c *call) error {
	r := c.r
	t, err := operation.ResolveTarget(r, p.domain)
	if err != nil {
		return err
	}
	c.target = t
	c.backend = p.backendFor(t.Bucket)
	c.info.set(func(i *requestInfo) { i.bucket, i.key = t.Bucket, t.Key })
	// r.URL.Query() drops what it cannot parse, including everything past
	// net/url's parameter limit: a request it misread (a CreateMultipartUpload
	// seen as a PutObject) must be refused, not classified.
	query, err := parseClientQuery(r.URL.RawQuery)
	if err != nil {
		return s3err.Newf(s3err.InvalidArgument, "The query string could not be parsed.").With("ArgumentName", "query")
	}
	op, err := operation.Classify(r.Method, t, query, r.Header)
	if err != nil {
		return err
	}
	if err := checkBackendBucket(c.backend, t.Bucket); err != nil {
		return err
	}
	if err := checkConnectionHeader(r.Header); err != nil {
		return err
	}
	c.parsedQuery = query
	c.op = op
	c.info.set(func(i *requestInfo) { i.op = op })
	return nil
}

// parseClientQuery is url.ParseQuery without the empty map it makes for a
// request that has no query (most GETs and PUTs): a nil url.Values reads
// as an empty one, and nothing writes into the client's parsed query.
func parseClientQuery(rawQuery string) (url.Values, error) {
	if rawQuery == "" {
		return nil, nil
	}
	return url.ParseQuery(rawQuery)
}

// backendFor returns the backend that serves a client bucket.
func (p *Proxy) backendFor(bucket string) *Backend {
	if b, ok := p.bucketBackends[bucket]; ok {
		return b
	}
	return p.backend
}

// authorise applies the key's bucket grants. CopyObject and UploadPartCopy
// also read their source bucket.
func (p *Proxy) authorise(c *call) error {
	if c.auth.Anonymous {
		return p.authoriseAnonymous(c)
	}
	if !p.access.Allowed(c.auth.AccessKeyID, c.target.Bucket, c.op.Writes()) {
		return s3err.New(s3err.AccessDenied)
	}
	if c.op == operation.CopyObject || c.op == operation.UploadPartCopy {
		return p.authoriseCopySource(c)
	}
	return nil
}

// anonymousReads are the calls an anonymous grant allows: reading objects
// and listing them, nothing else (no subresources, no ListBuckets).
var anonymousReads = map[operation.Operation]bool{operation.GetObject: true, operation.HeadObject: true, operation.ListObjects: true, operation.ListObjectsV2: true}

// authoriseAnonymous allows an unsigned request only as a read on a bucket
// of the anonymous grant. Like S3, it refuses response header overrides
// (response-content-type, ...) to anonymous clients.
func (p *Proxy) authoriseAnonymous(c *call) error {
	if !anonymousReads[c.op] || !p.anonymousRead(c.target.Bucket) {
		return s3err.New(s3err.AccessDenied)
	}
	for name := range c.r.URL.Query() {
		if strings.HasPrefix(name, "response-") {
			return s3err.Newf(s3err.InvalidRequest, "Request specific response headers cannot be used for anonymous GET requests.")
		}
	}
	return nil
}

// fail answers the client with an S3 error document.
func (p *Proxy) fail(c *call, err error) {
	e := s3err.As(err)
	// The answer of a write under its lease (a detached call) asks the
	// store nothing more: the lease is released only after this answer,
	// and other writers of the key must not wait for a lookup.
	_, underLease := c.w.(*detachedWriter)
	if !underLease {
		e = p.inS3Order(c, e) // S3's order of checks (bucketfirst.go)
	}
	c.info.set(func(i *requestInfo) { i.err = e })
	if e.Code == s3err.InternalError || e.Code == s3err.BadGateway || e.Code == s3err.ServiceUnavailable {
		p.log.Warn().Str("request_id", c.id).Err(err).Msg("request failed")
	}
	if !underLease {
		p.addErrorCORS(c, e) // errorcors.go: a browser page can read the error
		closeIfUnauthenticated(c)
	}
	s3err.Write(c.w, c.r, e, c.id)
	if c.auth == nil || !c.auth.Body.Started() {
		drainUnreadBody(c.w, c.r)
	}
}
