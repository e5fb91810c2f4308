package proxy

import (
	"net/http"
	"net/url"
	"testing"
)

// A presigned URL carries its ACL headers as query parameters, and a store
// obeys them there: they are checked against the grant as headers are,
// and one given twice (or both ways) is refused.
func TestConfigurationACLHeadersInTheQuery(t *testing.T) {
	me := clientIdentityOf(grantedID)
	grant := func(value string) string { return url.QueryEscape(value) }
	cases := []configCase{
		{"query public-read", "PUT", "/alpha/k?x-amz-acl=public-read", nil, "data", 403, "AccessDenied"},
		{"query public-read in other case", "PUT", "/alpha/k?X-Amz-Acl=public-read", nil, "data", 403, "AccessDenied"},
		{"query aws-exec-read", "PUT", "/alpha/k?x-amz-acl=aws-exec-read", nil, "data", 403, "AccessDenied"},
		{"query grant to another ID", "PUT", "/alpha/k?x-amz-grant-full-control=" + grant(`id="someone"`), nil, "data", 403, "AccessDenied"},
		{"query grant to everyone on an ACL", "PUT", "/alpha?acl&x-amz-grant-read=" + grant(`uri="http://acs.amazonaws.com/groups/global/AllUsers"`), nil, "", 403, "AccessDenied"},
		{"query grant to another ID, upload", "POST", "/alpha/k?uploads&X-AMZ-GRANT-WRITE-ACP=" + grant(`id="someone"`), nil, "", 403, "AccessDenied"},
		{"query and header", "PUT", "/alpha/k?x-amz-acl=private", http.Header{"X-Amz-Acl": {"private"}}, "data", 400, "InvalidArgument"},
		{"query twice in two cases", "PUT", "/alpha/k?x-amz-acl=private&X-Amz-Acl=public-read", nil, "data", 400, "InvalidArgument"},
		{"query canned ACL with an ACL body", "PUT", "/alpha?acl&x-amz-acl=private", nil, acl("CanonicalUser", `<ID>`+me+`</ID>`), 400, "UnexpectedContent"},
		{"query private", "PUT", "/alpha/k?x-amz-acl=private", nil, "data", 200, ""},
		{"query public-read on an anonymous bucket", "PUT", "/granted-public/k?x-amz-acl=public-read", nil, "data", 200, ""},
		{"query grant to the client", "PUT", "/alpha/k?x-amz-grant-read=" + grant(`id="`+me+`"`), nil, "data", 200, ""},
	}
	runConfigCases(t, cases)
}
