package sigv4

import (
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// The words of S3's answers to a broken form, word for word: clients and
// test suites compare them. Where S3's wire text is known from captured
// answers (LocalStack's tests validated against AWS, issue reports quoting
// S3), it is the one expected here; docs/fidelity.md lists the sources.

// postError verifies form's signature and returns its error, failing the
// test when there is none. The policy document's words are
// internal/postform's (policy_words_test.go).
func postError(t *testing.T, form map[string]string) *s3err.Error {
	t.Helper()
	_, err := testVerifier().VerifyPostSignature(form)
	if err == nil {
		t.Fatal("VerifyPostSignature accepted the form")
	}
	return s3err.As(err)
}

func field(e *s3err.Error, name string) (string, bool) {
	for _, f := range e.Extra {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

func TestPostAuthFieldErrorsAreS3s(t *testing.T) {
	good := standardConditions(testNow.Add(time.Hour), "")
	date := testNow.Format(scopeDateLayout)
	cases := []struct {
		name                string
		set                 map[string]string
		code                s3err.Code
		message             string
		argName, argValue   string
		extraName, extraVal string
	}{
		{"unknown algorithm", map[string]string{"x-amz-algorithm": "invalid"}, s3err.InvalidArgument,
			"Only AWS4-HMAC-SHA256 is supported", "X-Amz-Algorithm", "invalid", "", ""},
		{"date not ISO 8601", map[string]string{"x-amz-date": "invalid_date"}, s3err.InvalidArgument,
			"X-Amz-Date must be formated via ISO8601 Long format", "X-Amz-Date", "invalid_date", "", ""},
		{"credential malformed", map[string]string{"x-amz-credential": "malformed-no-slashes"}, s3err.InvalidArgument,
			`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
			"X-Amz-Credential", "malformed-no-slashes", "", ""},
		{"credential of another region", map[string]string{"x-amz-credential": testAccessKey + "/" + date + "/us-west-2/s3/aws4_request"},
			s3err.InvalidArgument, "the region 'us-west-2' is wrong; expecting '" + testRegion + "'",
			"X-Amz-Credential", testAccessKey + "/" + date + "/us-west-2/s3/aws4_request", "Region", testRegion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := postError(t, postFixture(good, tc.set))
			if e.Code != tc.code || e.Message != tc.message {
				t.Fatalf("got %s %q, want %s %q", e.Code, e.Message, tc.code, tc.message)
			}
			if v, _ := field(e, "ArgumentName"); v != tc.argName {
				t.Errorf("ArgumentName = %q, want %q", v, tc.argName)
			}
			if v, _ := field(e, "ArgumentValue"); v != tc.argValue {
				t.Errorf("ArgumentValue = %q, want %q", v, tc.argValue)
			}
			if tc.extraName != "" {
				if v, _ := field(e, tc.extraName); v != tc.extraVal {
					t.Errorf("%s = %q, want %q", tc.extraName, v, tc.extraVal)
				}
			}
		})
	}
}

func TestPostSignatureMismatchCarriesStringToSignBytes(t *testing.T) {
	form := postFixture(standardConditions(testNow.Add(time.Hour), ""), map[string]string{"x-amz-signature": "incorrect_signature"})
	e := postError(t, form)
	if e.Code != s3err.SignatureDoesNotMatch {
		t.Fatalf("code = %s", e.Code)
	}
	policy := form["policy"]
	want := map[string]string{
		"AWSAccessKeyId": testAccessKey, "StringToSign": policy, "SignatureProvided": "incorrect_signature",
		"StringToSignBytes": spacedHex(policy),
	}
	for name, value := range want {
		if got, ok := field(e, name); !ok || got != value {
			t.Errorf("%s = %q, want %q", name, got, value)
		}
	}
	if got, _ := field(e, "StringToSignBytes"); got[:5] != "65 79" { // "ey", the start of base64 "{"
		t.Errorf("StringToSignBytes starts %q", got[:5])
	}
	if _, ok := field(e, "CanonicalRequest"); ok {
		t.Error("a form has no canonical request, but the error names one")
	}
}
