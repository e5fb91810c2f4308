package s3err

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPreconditionDocument(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPut, "/bucket/key", nil)
	Write(rec, req, Precondition("If-Match"), "REQ123")
	body := rec.Body.String()
	if rec.Code != http.StatusPreconditionFailed {
		t.Fatalf("status %d", rec.Code)
	}
	for _, want := range []string{
		"<Code>PreconditionFailed</Code>",
		"<Message>At least one of the pre-conditions you specified did not hold</Message>",
		"<Condition>If-Match</Condition>",
		"<Resource>/bucket/key</Resource>",
		"<RequestId>REQ123</RequestId>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
	if rec.Header().Get("Content-Type") != "application/xml" {
		t.Errorf("content type %q", rec.Header().Get("Content-Type"))
	}
}

func TestStatusesMatchS3(t *testing.T) {
	cases := map[Code]int{
		AccessDenied: 403, InvalidAccessKeyID: 403, SignatureDoesNotMatch: 403, RequestTimeTooSkewed: 403,
		AuthorizationHeaderMalformed: 400, XAmzContentSHA256Mismatch: 400, BadDigest: 400,
		NoSuchKey: 404, PreconditionFailed: 412, ConditionalRequestConflict: 409, NotImplemented: 501,
		ServiceUnavailable: 503, MissingContentLength: 411, InvalidWriteOffset: 400, TooManyParts: 400,
	}
	for code, status := range cases {
		if got := New(code).Status(); got != status {
			t.Errorf("%s: status %d, want %d", code, got, status)
		}
	}
	if got := (&Error{Code: "Unknown"}).Status(); got != 500 {
		t.Errorf("unknown code: %d", got)
	}
}

func TestHeadHasNoBodyAndExtraFieldsRender(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, httptest.NewRequest(http.MethodHead, "/b/k", nil), New(NoSuchKey), "R")
	if rec.Code != 404 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD: %d, %d body bytes", rec.Code, rec.Body.Len())
	}
	doc := string(New(SignatureDoesNotMatch).With("AWSAccessKeyId", "AK<&>").XML("/", "R"))
	if !strings.Contains(doc, "<AWSAccessKeyId>AK&lt;&amp;&gt;</AWSAccessKeyId>") {
		t.Fatalf("extra field not escaped or missing: %s", doc)
	}
}

func TestAsWrapsForeignErrors(t *testing.T) {
	cause := errors.New("disk on fire")
	e := As(fmt.Errorf("context: %w", cause))
	if e.Code != InternalError || !errors.Is(e, cause) {
		t.Fatalf("As(foreign) = %v", e)
	}
	inner := New(NoSuchKey)
	if As(fmt.Errorf("wrapped: %w", inner)) != inner || !Is(fmt.Errorf("x: %w", inner), NoSuchKey) {
		t.Fatal("As/Is did not find the wrapped S3 error")
	}
	if strings.Contains(string(e.XML("/", "R")), "disk on fire") {
		t.Fatal("the cause leaked into the client's document")
	}
}

// TestMessagesAreS3s pins the default messages to Amazon S3's words, as its
// error responses carry them: clients and test suites compare them
// verbatim, full stops and capitals included ("Content-MD5", not
// "Content-Md5"; "Access Denied" without a full stop).
func TestMessagesAreS3s(t *testing.T) {
	cases := map[Code]string{
		AccessDenied:          "Access Denied",
		BadDigest:             "The Content-MD5 you specified did not match what we received.",
		InvalidDigest:         "The Content-MD5 you specified is not valid.",
		InvalidAccessKeyID:    "The AWS Access Key Id you provided does not exist in our records.",
		IncompleteBody:        "The request body terminated unexpectedly",
		InvalidChunkSizeError: "Only the last chunk is allowed to have a size less than 8192 bytes",
		InvalidToken:          "The provided token is malformed or otherwise invalid.",
		MalformedTrailerError: "The request contained trailing data that was not well-formed or did not conform to our published schema.",
		MissingContentLength:  "You must provide the Content-Length HTTP header.",
		NoSuchUpload:          "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
		NotImplemented:        "A header you provided implies functionality that is not implemented.",
		PreconditionFailed:    "At least one of the pre-conditions you specified did not hold",
		RequestTimeTooSkewed:  "The difference between the request time and the current time is too large.",
		ServiceUnavailable:    "Reduce your request rate.",
		SignatureDoesNotMatch: "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
		UnexpectedContent:     "This request does not support content.",
	}
	for code, want := range cases {
		if got := New(code).Message; got != want {
			t.Errorf("%s: message %q, want %q", code, got, want)
		}
	}
	if got := New(MalformedTrailerError).Status(); got != http.StatusBadRequest {
		t.Errorf("MalformedTrailerError: status %d, want 400", got)
	}
}
