package proxy

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// maxACLBody bounds the AccessControlPolicy s3cond reads to name the
// backend principal in it; S3 allows 100 grants, a few KiB.
const maxACLBody = 64 << 10

// setsACL are the calls whose ACL may name the client's identity.
var setsACL = map[operation.Operation]bool{operation.PutBucketAcl: true, "PutObjectAcl": true}

// aclBody is the forward spec of a PutBucketAcl or PutObjectAcl whose
// grants or body name the client's identity: the backend principal is
// named in its place (clientidentity.go). Any other call, and an ACL that
// names it nowhere, is sent as the client sent it. The body is the one
// checkConfiguration read (c.configBody).
func (p *Proxy) aclBody(c *call) (forwardSpec, error) {
	spec := p.clientBody(c)
	if !setsACL[c.op] || len(c.backend.Identity) == 0 {
		return spec, nil
	}
	header := backendGrantHeaders(c)
	if body := c.configBody; len(body) > 0 {
		if namesClientIdentity(c, body) {
			var err error
			if body, err = backendACL(c, body); err != nil {
				return spec, err
			}
			// The client's checksums were of its own body, not of this one.
			for name := range c.r.Header {
				if isChecksumHeader(name) {
					header = withHeader(header, name, nil)
				}
			}
		}
		renamed := configBodySpec(body)
		spec.body, spec.length, spec.payloadSHA256 = renamed.body, renamed.length, renamed.payloadSHA256
		header = withHeader(header, "Content-Md5", renamed.header["Content-Md5"])
	}
	if header != nil {
		spec.header = header
	}
	return spec, nil
}

// backendACL is an AccessControlPolicy with the client's identity renamed.
func backendACL(c *call, body []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := s3xml.RewriteIdentities(&out, bytes.NewReader(body), toBackendIdentity(c)); err != nil {
		return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("read the ACL body: %w", err))
	}
	return out.Bytes(), nil
}

func withHeader(h http.Header, name string, values []string) http.Header {
	if h == nil {
		h = http.Header{}
	}
	h[name] = values
	return h
}
