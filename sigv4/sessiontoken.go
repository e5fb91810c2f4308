package sigv4

import (
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// checkSessionToken refuses a security token (header or query, whatever
// the kind of authentication) unless the verifier accepts temporary credentials. S3
// answers a token sent with a permanent key 400 InvalidToken before it
// checks the signature, so a token added to a presigned URL after signing
// gets that answer too, not SignatureDoesNotMatch.
func (v *Verifier) checkSessionToken(r *http.Request, query map[string][]string) *s3err.Error {
	if v.SessionTokens {
		return nil
	}
	_, inHeader := r.Header[headerSecurityToken]
	inQuery := false
	if strings.Contains(r.URL.RawQuery, querySecurityToken) { // cheap test first: parsing allocates
		if query == nil {
			query = parseQuery(r.URL.RawQuery)
		}
		_, inQuery = query[querySecurityToken]
	}
	if inHeader || inQuery {
		return s3err.New(s3err.InvalidToken)
	}
	return nil
}
