package sigv4

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// FuzzSignatureV2 feeds hostile SigV2 headers, queries and dates to the
// verifier: it never panics, never accepts what it cannot have verified
// (only the documented example key exists, and no fuzzed signature is
// its), and answers with a status S3 uses for authentication.
func FuzzSignatureV2(f *testing.F) {
	f.Add("AWS AKIAIOSFODNN7EXAMPLE:bWq2s1WEIj+Ydj0vQ697zp+IXMU=", "", "Tue, 27 Mar 2007 19:36:42 +0000")
	f.Add("", "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D", "")
	f.Add("AWS :", "Signature=&Signature=", "x")
	f.Add("AWS a:b:c", "AWSAccessKeyId=&Expires=-1&Signature=%ZZ", "Mon, 01 Jan 0001 00:00:00 GMT")
	f.Add("AWS AKIAIOSFODNN7EXAMPLE:bWq2s1WEIj+Ydj0vQ697zp+IXMU=", "acl&uploadId=%00&versionId=a%2Fb&response-expires=", "Tue, 27 Mar 2007 19:36:42 +0000")
	now := time.Unix(1175139620, 0).Add(-time.Hour)
	f.Fuzz(func(t *testing.T, authorization, rawQuery, date string) {
		v := newV2Verifier(now)
		r := httptest.NewRequest(http.MethodGet, "/photos/puppy.jpg", http.NoBody)
		r.URL.RawQuery = rawQuery
		r.Host = "johnsmith.s3.amazonaws.com"
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		if date != "" {
			r.Header.Set("Date", date)
		}
		req, err := v.Verify(r)
		if err != nil {
			e, ok := err.(*s3err.Error)
			if !ok || (e.Status() != http.StatusBadRequest && e.Status() != http.StatusForbidden) {
				t.Fatalf("error %v: want an S3 400 or 403", err)
			}
			return
		}
		if req.SignatureV2 && req.AccessKeyID != v2AccessKey {
			t.Fatalf("accepted SigV2 for key %q", req.AccessKeyID)
		}
	})
}
