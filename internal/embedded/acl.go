package embedded

import (
	"net/http"

	"github.com/johannesboyne/gofakes3"
)

// privateACLs answers the ACL subresource, which gofakes3 does not know: it
// took GET ?acl for a GET of the object (s3cmd's copy then failed parsing
// the object as XML) and PUT ?acl for a PutObject, which replaced the
// object's content with the ACL document. The store keeps no ACLs: every
// bucket and object reads as private to its owner, and setting an ACL is
// refused with 501 NotImplemented, so that no tool believes it granted
// access.
type privateACLs struct {
	next    http.Handler
	backend gofakes3.Backend
}

var _ http.Handler = (*privateACLs)(nil)

// ownerOnly is S3's ACL of a private bucket or object. The store has one
// owner, named after the development key's owner, s3cond.
const ownerOnly = `<?xml version="1.0" encoding="UTF-8"?>
<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>s3cond</ID><DisplayName>s3cond</DisplayName></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>s3cond</ID><DisplayName>s3cond</DisplayName></Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>`

func (p *privateACLs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := objectOf(r)
	if bucket == "" || !r.URL.Query().Has("acl") {
		p.next.ServeHTTP(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if err := p.exists(bucket, key); err != nil {
			writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(ownerOnly))
	case http.MethodPut:
		writeError(w, r, gofakes3.ErrorMessage(gofakes3.ErrNotImplemented,
			"The development store keeps no ACLs: buckets and objects are private to their owner."))
	default:
		p.next.ServeHTTP(w, r)
	}
}

// exists reports a missing bucket or object as S3's error.
func (p *privateACLs) exists(bucket, key string) error {
	if key == "" {
		exists, err := p.backend.BucketExists(bucket)
		if err != nil {
			return err
		}
		if !exists {
			return gofakes3.BucketNotFound(bucket)
		}
		return nil
	}
	obj, err := p.backend.HeadObject(bucket, key)
	if err != nil {
		return err
	}
	if obj.Contents != nil {
		_ = obj.Contents.Close()
	}
	return nil
}
