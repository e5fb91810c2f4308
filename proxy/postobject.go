package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/postform"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// PostPolicyVerifier checks the signature over a browser-based upload's
// policy; the policy's conditions are then internal/postform's to check.
// *sigv4.Verifier is the implementation; an Authenticator that is not one
// has browser uploads refused.
type PostPolicyVerifier interface {
	VerifyPostSignature(fields map[string]string) (*sigv4.PostCredential, error)
}

var _ PostPolicyVerifier = (*sigv4.Verifier)(nil)

// servePostObject handles POST Object, S3's browser-based upload: a
// multipart/form-data POST to the bucket whose form fields carry the key,
// the object's headers and a signed policy, and whose last field is the
// file. s3cond verifies the policy's signature (sigv4.VerifyPostSignature)
// and its conditions (postform.CheckPolicy), authorises the
// signing key for a write, and stores the file as a PutObject would, so
// the upload streams to the backend with its final byte held back until
// the file has ended where it must and its checksums matched. S3 has no
// conditional POST: the write is unconditional, and takes a lease only in
// strict mode, as an unconditional PutObject does.
func (p *Proxy) servePostObject(c *call) {
	verifier, ok := p.auth.(PostPolicyVerifier)
	if !ok {
		p.fail(c, s3err.Newf(s3err.NotImplemented, "This s3cond does not verify POST policies."))
		return
	}
	// The form and its file read through the body idle timeout; drainUnreadBody
	// reads the rest with deadlines of its own.
	unlimited := c.r.Body
	p.limitBodyIdle(c)
	// The fields are read before anything is authenticated: however
	// steadily they trickle in, they get postFormTimeout in total.
	if c.r.Body == &c.info.body {
		c.info.body.until = time.Now().Add(p.postFormTimeout)
	}
	form, err := postform.Read(c.r)
	c.info.body.until = time.Time{}
	c.r.Body = unlimited
	if err != nil {
		p.fail(c, err)
		return
	}
	put, err := p.postedPut(c, verifier, form)
	if err != nil {
		p.fail(c, err)
		return
	}
	// The PutObject reaches the store without the page's Origin, so the
	// bucket's CORS headers, which a page's fetch() needs to read the
	// answer, are looked up for the POST itself (errorcors.go).
	p.addCORS(c)
	answer := &postAnswer{w: c.w}
	put.w = answer
	if handled := p.serveConditional(put); !handled {
		p.forward(put, p.clientBody(put))
	}
	if answer.succeeded {
		p.answerPost(c, put.target, form.Fields, answer.header())
	}
}

// postedPut checks the form and builds the PutObject call that stores its
// file.
func (p *Proxy) postedPut(c *call, verifier PostPolicyVerifier, form *postform.Form) (*call, error) {
	rawKey, ok := form.Fields["key"]
	if !ok {
		return nil, postform.MissingKey()
	}
	key := rawKey
	if form.HasFileName {
		// As S3: a file part without a filename parameter leaves
		// "${filename}" in the key as it is; an empty one removes it.
		key = strings.ReplaceAll(rawKey, "${filename}", form.FileName)
	}
	auth, length, err := verifyPost(verifier, form.Fields, c.target.Bucket, key)
	p.leaveUnauthenticated(c)
	if err != nil {
		return nil, err
	}
	if !auth.Anonymous {
		frontconn.Authenticated(c.r.Context())
	}
	c.info.set(func(i *requestInfo) { i.accessKeyID, i.key = auth.AccessKeyID, key })
	if auth.Anonymous || !p.access.Allowed(auth.AccessKeyID, c.target.Bucket, true) {
		// An anonymous grant is read-only: an unsigned form writes nothing.
		return nil, s3err.New(s3err.AccessDenied)
	}
	if err := checkPostKey(key); err != nil {
		return nil, err
	}
	if err := c.backend.KeyPolicy.Check(key); err != nil {
		return nil, err
	}
	if err := length.Check(form.FileSize); err != nil {
		return nil, err
	}
	if form.FileSize > maxSinglePut {
		return nil, (&postform.LengthRange{Max: maxSinglePut}).Check(form.FileSize)
	}
	header, err := postform.PutHeader(form.Fields)
	if err != nil {
		return nil, err
	}
	// A form field is a PutObject header: object lock and SSE-C are
	// refused here as on a PUT (spec.md §7).
	if err := refuseUnimplemented(c.backend, operation.PutObject, header, nil); err != nil {
		return nil, err
	}
	if err := p.checkACLHeaders(c, header); err != nil {
		return nil, err // a form's canned ACL, as a header's (configrefs.go)
	}
	return p.putCall(c, auth.AccessKeyID, key, header, form)
}

// verifyPost checks a form's policy: its signature, then (unless the form
// is anonymous, with no policy to check) its expiration and conditions
// against the form's fields, bucket and key (the key after ${filename} was
// replaced). It returns the policy's content-length-range.
func verifyPost(verifier PostPolicyVerifier, fields map[string]string, bucket, key string) (*sigv4.PostCredential, *postform.LengthRange, error) {
	auth, err := verifier.VerifyPostSignature(fields)
	if err != nil || auth.Anonymous {
		return auth, nil, err
	}
	length, err := postform.CheckPolicy(fields, bucket, key, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return auth, length, nil
}

// putCall is the PutObject a POST form amounts to, as if the client had
// sent it: PUT /bucket/key with the form's headers and the file as body.
func (p *Proxy) putCall(c *call, accessKeyID, key string, header http.Header, form *postform.Form) (*call, error) {
	t := operation.Target{Bucket: c.target.Bucket, Key: key, RawKey: escapeKey(key)}
	u := *c.r.URL
	u.Path, u.RawPath, u.RawQuery = "/"+t.Bucket+"/"+key, "/"+url.PathEscape(t.Bucket)+"/"+t.RawKey, ""
	r, err := http.NewRequestWithContext(c.r.Context(), http.MethodPut, u.String(), c.r.Body)
	if err != nil {
		return nil, s3err.Wrap(s3err.InternalError, err)
	}
	r.URL, r.Header, r.ContentLength, r.Host = &u, header, form.FileSize, c.r.Host
	body, err := sigv4.NewBody(form.File(), sigv4.BodySpec{
		Mode: sigv4.PayloadUnsigned, ContentLength: form.FileSize, Header: header,
	})
	if err != nil {
		return nil, err
	}
	auth := &sigv4.Request{AccessKeyID: accessKeyID, Mode: sigv4.PayloadUnsigned, Body: body}
	return &call{w: c.w, r: r, id: c.id, op: operation.PutObject, target: t, backend: c.backend, auth: auth, info: c.info}, nil
}

// checkPostKey applies S3's key rules to a key that came from a form field
// (a URL key was checked by operation.ResolveTarget).
func checkPostKey(key string) error {
	switch {
	case key == "":
		return s3err.Newf(s3err.InvalidArgument, "User key must have a length greater than 0.").With("ArgumentName", "key")
	case len(key) > operation.MaxKeyBytes:
		return s3err.New(s3err.KeyTooLongError)
	case !utf8.ValidString(key):
		return s3err.Newf(s3err.InvalidArgument, "Object key is not valid UTF-8.").With("ArgumentName", "key")
	}
	return nil
}
