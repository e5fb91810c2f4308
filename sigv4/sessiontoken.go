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
	if mayNameSecurityToken(r.URL.RawQuery) { // cheap test first: parsing allocates
		if query == nil {
			query = parseQuery(r.URL.RawQuery)
		}
		inQuery = namesSecurityToken(query)
	}
	if inHeader || inQuery {
		return s3err.New(s3err.InvalidToken)
	}
	return nil
}

// mayNameSecurityToken reports whether a raw query could hold a security
// token parameter: its name in any case, or any percent-escape (a name
// spelled X-Amz-Security%2DToken is the same parameter once decoded).
func mayNameSecurityToken(rawQuery string) bool {
	if strings.Contains(rawQuery, "%") {
		return true
	}
	for i := 0; i+len(querySecurityToken) <= len(rawQuery); i++ {
		if strings.EqualFold(rawQuery[i:i+len(querySecurityToken)], querySecurityToken) {
			return true
		}
	}
	return false
}

// namesSecurityToken reports whether a decoded query has a security token
// parameter, whatever the case of its name: proxy drops every such
// parameter before the store, so none may pass unrefused either.
func namesSecurityToken(query map[string][]string) bool {
	for name := range query {
		if strings.EqualFold(name, querySecurityToken) {
			return true
		}
	}
	return false
}
