package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// Issue 23, item 1: versitygw keeps a multipart upload in
// <bucket>/.sgwtmp/multipart/<sha256(key)>/<uploadId>, so an uploadId of
// ../../../../victim on an object of a granted bucket wrote a part into
// the bucket victim (UploadPart), listed it (ListParts) and deleted it
// (AbortMultipartUpload). The uploadId is now a name; the store sees none
// of these requests, and the client gets S3's answer for an upload that
// does not exist.
func TestUploadIDTraversalNeverReachesTheStore(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, tc := range []struct{ method, query string }{
		{http.MethodPut, "uploadId=..%2F..%2F..%2F..%2Fvictim&partNumber=7"},
		{http.MethodGet, "uploadId=..%2F..%2F..%2F..%2Fvictim"},
		{http.MethodDelete, "uploadId=..%2F..%2F..%2F..%2Fvictim"},
		{http.MethodPost, "uploadId=..%5Cvictim"},
		{http.MethodDelete, "uploadId=.."},
		{http.MethodDelete, "uploadId=%252e%252e"},
	} {
		status, body := v.do(t, grantedID, tc.method, "/alpha/k?"+tc.query, nil, nil)
		if status != http.StatusNotFound || !strings.Contains(body, "<Code>NoSuchUpload</Code>") {
			t.Errorf("%s ?%s: %d %s, want 404 NoSuchUpload", tc.method, tc.query, status, body)
		}
		if got := v.store.take(); len(got) != 0 {
			t.Errorf("%s ?%s reached the store as %s %s", tc.method, tc.query, got[0].Method, got[0].URL)
		}
	}
}

func TestQueryValueGrammarAnswersAsS3(t *testing.T) {
	for _, tc := range []struct {
		query string
		code  s3err.Code
		// argument is the ArgumentName S3 names ("" when it names none).
		argument string
	}{
		{"versionId=a%2Fb", s3err.InvalidArgument, "versionId"},
		{"versionId=..", s3err.InvalidArgument, "versionId"},
		{"versionId=", s3err.InvalidArgument, "versionId"},
		{"versionId=v%00", s3err.InvalidArgument, "versionId"},
		{"version-id-marker=..%2Fx", s3err.InvalidArgument, "version-id-marker"},
		{"upload-id-marker=a%5Cb", s3err.InvalidArgument, "upload-id-marker"},
		{"partNumber=0", s3err.InvalidArgument, "partNumber"},
		{"partNumber=10001", s3err.InvalidArgument, "partNumber"},
		{"partNumber=-1", s3err.InvalidArgument, "partNumber"},
		{"partNumber=%2B1", s3err.InvalidArgument, "partNumber"},
		{"partNumber=1%20", s3err.InvalidArgument, "partNumber"},
		{"partNumber=0x10", s3err.InvalidArgument, "partNumber"},
		{"max-keys=-1", s3err.InvalidArgument, "max-keys"},
		{"max-keys=2147483648", s3err.InvalidArgument, "max-keys"},
		{"max-uploads=ten", s3err.InvalidArgument, "max-uploads"},
		{"max-parts=1.5", s3err.InvalidArgument, "max-parts"},
		{"part-number-marker=-3", s3err.InvalidArgument, "part-number-marker"},
		{"encoding-type=URL", s3err.InvalidArgument, "encoding-type"},
		{"list-type=3", s3err.InvalidArgument, "list-type"},
		{"marker=..%2F..%2Fsecret", s3err.InvalidArgument, "marker"},
		{"start-after=a%2F.%2Fb", s3err.InvalidArgument, "start-after"},
		{"continuation-token=..%2Fx", s3err.InvalidArgument, "continuation-token"},
		{"prefix=..", s3err.InvalidArgument, "prefix"},
		{"prefix=a%2F..%2F", s3err.InvalidArgument, "prefix"},
		{"delimiter=%00", s3err.InvalidArgument, "delimiter"},
		{"prefix=a%2F..", s3err.InvalidArgument, "prefix"},
		{"prefix=%2F..%2Fb", s3err.InvalidArgument, "prefix"},
		{"x-id=%23", s3err.InvalidArgument, "x-id"},
		{"response-content-type=a%0D%0AX-Evil:%201", s3err.InvalidArgument, "response-content-type"},
		{"uploads=x", s3err.InvalidArgument, "uploads"},
		{"versionId=a&versionId=b", s3err.InvalidArgument, "versionId"},
		{"x-amz-acl=public-read%0A", s3err.InvalidArgument, "x-amz-acl"},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = checkQuery(q, KeyPolicyStrict)
		e := s3err.As(err)
		if err == nil || e.Code != tc.code || errorField(e, "ArgumentName") != tc.argument {
			t.Errorf("%q: %v, want %s naming %q", tc.query, err, tc.code, tc.argument)
		}
	}
}

func TestQueryValueGrammarAcceptsWhatClientsSend(t *testing.T) {
	for _, query := range []string{
		"uploadId=2~aBcD-_.x%3D%3D", // Ceph RGW's form; base64 padding
		"uploadId=ZTI5ZDk4NGEtNmU5Mi00YzM5.NjQ0ZmM&partNumber=10000",
		"versionId=null", "versionId=3HL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrHY",
		"list-type=2&continuation-token=dir%2Fkey.txt&start-after=dir%2F&max-keys=1000&encoding-type=url&fetch-owner=true",
		"prefix=photos%2F2024%2F&delimiter=%2F&marker=photos%2F2024%2Fa.jpg",
		"prefix=.&delimiter=-", "prefix=",
		// Issue 32: what S3 takes and s3-tests sends (its delimiter
		// "unreadable" and prefix "not exist" tests).
		"delimiter=%0A", "delimiter=d&prefix=%2F", "prefix=a%2F%2Fb%2F.%2F",
		"versions&key-marker=a%2Fb&version-id-marker=null&max-keys=0",
		"uploads&key-marker=k&upload-id-marker=u-1&max-uploads=5",
		"response-content-disposition=attachment%3B%20filename%3D%22a%20b.txt%22&response-expires=Thu%2C%2001%20Dec%202094%2016%3A00%3A00%20GMT",
		"x-id=GetObject", "analytics&id=report.1_a-b", "select&select-type=2", "location&bucket-region=eu-west-1",
		"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&x-amz-acl=private",
	} {
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkQuery(q, KeyPolicyStrict); err != nil {
			t.Errorf("%q: %v", query, err)
		}
	}
}

// What the store receives is what s3cond checked: the query is rebuilt
// from the parsed values (numbers as numbers, every byte but the
// unreserved ones escaped), not relayed.
func TestOutboundQueryIsBuiltFromCheckedValues(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, tc := range []struct{ query, want string }{
		{"list-type=2&max-keys=007&prefix=a+b", "list-type=2&max-keys=7&prefix=a%20b"},
		{"prefix=a%2Bb&delimiter=/", "delimiter=%2F&prefix=a%2Bb"},
		{"upload%49d=u-1&partNumber=0002", "partNumber=2&uploadId=u-1"},
	} {
		method := http.MethodGet
		if strings.Contains(tc.query, "partNumber") {
			method = http.MethodPut
		}
		target := "/" + bucketName + "?" + tc.query
		if method == http.MethodPut {
			target = "/" + bucketName + "/k?" + tc.query
		}
		status, body := v.do(t, testKeyID, method, target, nil, nil)
		got := v.store.take()
		if status != http.StatusOK || len(got) != 1 {
			t.Fatalf("?%s: %d %s, %d store requests", tc.query, status, body, len(got))
		}
		if got[0].URL.RawQuery != tc.want {
			t.Errorf("?%s reached the store as ?%s, want ?%s", tc.query, got[0].URL.RawQuery, tc.want)
		}
	}
}

// Issue 23, item 7: versitygw drops everything after a '#' in the request
// target, so a read-only key's POST /b/k?x-id=#&select&select-type=2 (a
// SelectObjectContent, a read) reached it as another operation. A byte RFC
// 9112 does not allow in a request target is now 400 InvalidURI, and the
// store sees nothing.
func TestRequestTargetOutsideRFC9112IsRefused(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, target := range []string{
		"/" + bucketName + "/b?x-id=#&select&select-type=2",
		"/" + bucketName + "/b#fragment",
		"/" + bucketName + "/a\"b", "/" + bucketName + "/a<b>", "/" + bucketName + "/a\\..\\b",
		"/" + bucketName + "/a{b}", "/" + bucketName + "/a|b", "/" + bucketName + "/a^b", "/" + bucketName + "/a`b",
		"/" + bucketName + "/k?prefix=%zz", "/" + bucketName + "/k?prefix=%4", "/" + bucketName + "/caf\xc3\xa9",
	} {
		// As Go's server reads such a request line: it keeps the target
		// as sent, and ParseRequestURI takes a '#' for part of the query.
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatalf("%q: %v", target, err)
		}
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.RequestURI, req.URL, req.Host = target, u, "s3cond.test"
		signWithTestKey(t, req, nil)
		rec := httptest.NewRecorder()
		v.proxy.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "<Code>InvalidURI</Code>") {
			t.Errorf("%q: %d %s, want 400 InvalidURI", target, rec.Code, rec.Body.String())
		}
		if got := v.store.take(); len(got) != 0 {
			t.Errorf("%q reached the store as %s %s", target, got[0].Method, got[0].URL)
		}
	}
	for _, target := range []string{
		"/" + bucketName + "/a%20b~c-d_e.f!$&'()*+,;=:@?list-type=2&prefix=%2F?x", "http://s3cond.test/" + bucketName + "/k",
	} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if err := operation.CheckRequestTarget(req); err != nil {
			t.Errorf("%q: %v", target, err)
		}
	}
}

// Issue 23, item 4: s3cond cut a copy source at its first '?', so
// "alpha/a?/../b" passed the key policy as alpha/a, while versitygw
// decodes the whole value, cuts only at "?versionId=" and copied alpha/b
// (and "alpha/a?/../../secret/s.txt" would read another bucket on a store
// without a check of its own). s3cond now reads it as S3 does and refuses
// the ambiguity; the store sees nothing.
func TestCopySourceIsReadAsS3ReadsIt(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, src := range []string{
		"alpha/a?/../b", "alpha/a%3F/../b", "/alpha/a?/../../secret/s.txt", "alpha/a?x=1",
		"alpha/a?versionId=v1&x=1", "alpha/a?versionId=../v", "alpha/a?versionId=", "alpha/a?versionId=v?versionId=w",
		"alpha/../secret/s.txt", "alpha/a%2F..%2F..%2Fsecret",
		// A key holding "?versionId=" (S3 takes it) reads as another key and
		// a version on a store that decodes the header before cutting.
		"alpha%2Fk%3FversionId%3Dnull", "alpha/k%3FversionId=v1",
	} {
		status, body := v.do(t, grantedID, http.MethodPut, "/alpha/copy", http.Header{"X-Amz-Copy-Source": {src}}, nil)
		if status != http.StatusBadRequest || !strings.Contains(body, "<Code>InvalidArgument</Code>") {
			t.Errorf("copy source %q: %d %s, want 400 InvalidArgument", src, status, body)
		}
		if got := v.store.take(); len(got) != 0 {
			t.Errorf("copy source %q reached the store as %q", src, got[0].Header.Get("X-Amz-Copy-Source"))
		}
	}
	// Two headers are two sources: S3 and a store could take either.
	status, _ := v.do(t, grantedID, http.MethodPut, "/alpha/copy", http.Header{"X-Amz-Copy-Source": {"alpha/a", "secret/s"}}, nil)
	if got := v.store.take(); status != http.StatusBadRequest || len(got) != 0 {
		t.Errorf("two copy sources: %d, %d store requests; want 400 and none", status, len(got))
	}
}

// The store's x-amz-copy-source is rebuilt from the parsed source: the
// backend's bucket, the key with every byte but the unreserved ones and '/'
// escaped (a '+' a store could decode as a space is %2B), the checked version.
func TestCopySourceReachesTheStoreAsParsed(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, tc := range []struct{ src, want string }{
		{"alpha/dir/a+b", "/alpha/dir/a%2Bb"},
		{"/alpha/dir/a%20b?versionId=v-1.x", "/alpha/dir/a%20b?versionId=v-1.x"},
		// Issue 32: an encoded '?' is the key's, as S3 reads it (s3-tests'
		// test_multipart_copy_special_names); the version follows the last
		// unencoded '?'.
		{"alpha/%3Fnot-question", "/alpha/%3Fnot-question"},
		{"alpha/a%3Fb?versionId=v1", "/alpha/a%3Fb?versionId=v1"},
		{"alpha/a?b?versionId=v1", "/alpha/a%3Fb?versionId=v1"},
		{"alpha%2Fk%3Fx?versionId=v%2D1", "/alpha/k%3Fx?versionId=v-1"},
	} {
		status, body := v.do(t, grantedID, http.MethodPut, "/alpha/copy", http.Header{"X-Amz-Copy-Source": {tc.src}}, nil)
		got := v.store.take()
		if status != http.StatusOK || len(got) != 1 {
			t.Fatalf("copy source %q: %d %s, %d store requests", tc.src, status, body, len(got))
		}
		if sent := got[0].Header.Values("X-Amz-Copy-Source"); len(sent) != 1 || sent[0] != tc.want {
			t.Errorf("copy source %q reached the store as %q, want %q", tc.src, sent, tc.want)
		}
	}
}

func TestCopySourceRangeIsChecked(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, bad := range []string{"bytes=5-1", "bytes=-5", "bytes=1-", "bytes=0-1,3-4", "bytes= 0-1", "items=0-1"} {
		status, body := v.do(t, grantedID, http.MethodPut, "/alpha/k?uploadId=u-1&partNumber=1",
			http.Header{"X-Amz-Copy-Source": {"alpha/src"}, "X-Amz-Copy-Source-Range": {bad}}, nil)
		if got := v.store.take(); status != http.StatusBadRequest || !strings.Contains(body, "x-amz-copy-source-range") || len(got) != 0 {
			t.Errorf("range %q: %d %s, %d store requests; want 400 InvalidArgument and none", bad, status, body, len(got))
		}
	}
	status, body := v.do(t, grantedID, http.MethodPut, "/alpha/k?uploadId=u-1&partNumber=1",
		http.Header{"X-Amz-Copy-Source": {"alpha/src"}, "X-Amz-Copy-Source-Range": {"bytes=0007-9"}}, nil)
	got := v.store.take()
	if status != http.StatusOK || len(got) != 1 || got[0].Header.Get("X-Amz-Copy-Source-Range") != "bytes=7-9" {
		t.Fatalf("a good range: %d %s, %d store requests", status, body, len(got))
	}
}

func TestHeaderGrammarKeysAreCanonical(t *testing.T) {
	for _, g := range headerGrammars {
		if g.key != http.CanonicalHeaderKey(g.name) {
			t.Errorf("%s: key %q, want %q", g.name, g.key, http.CanonicalHeaderKey(g.name))
		}
	}
}

// Every ordinary parameter of the allow-list has a row of its own in the
// value allow-list: a parameter added to one and not the other would be
// held only to the hoisted-header grammar.
func TestEveryOrdinaryParameterHasAGrammar(t *testing.T) {
	for _, name := range operation.OrdinaryParameters() {
		if _, ok := queryGrammar[name]; !ok {
			t.Errorf("the ordinary parameter %q has no row in queryGrammar", name)
		}
	}
	if _, ok := queryGrammar["uploadId"]; !ok {
		t.Error("uploadId, a subresource with a value, has no row in queryGrammar")
	}
}

// S3 checks a request's arguments after the key's access: a key without a
// grant on the bucket learns nothing from a bad value.
func TestValuesAreCheckedAfterTheGrant(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	status, body := v.do(t, grantedID, http.MethodGet, "/secret/k?versionId=..%2Fx", nil, nil)
	if status != http.StatusForbidden || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Fatalf("%d %s, want 403 AccessDenied", status, body)
	}
}

// An empty versionId is refused as S3 refuses it, in S3's words (AWS SDKs
// send "?versionId=" for a version ID pointer to ""; versitygw v1.8.0's
// full-flow does on its object-lock calls).
func TestEmptyVersionIDGetsS3Words(t *testing.T) {
	_, err := checkQuery(url.Values{"versionId": {""}}, KeyPolicyStrict)
	e := s3err.As(err)
	if err == nil || e.Code != s3err.InvalidArgument || e.Message != "Version id cannot be the empty string" {
		t.Fatalf("versionId=: %v, want InvalidArgument \"Version id cannot be the empty string\"", err)
	}
}
