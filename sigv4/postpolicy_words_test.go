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

// postError verifies form and returns its error, failing the test when
// there is none.
func postError(t *testing.T, form PostForm) *s3err.Error {
	t.Helper()
	_, err := testVerifier().VerifyPost(form)
	if err == nil {
		t.Fatal("VerifyPost accepted the form")
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
	policy := form.Fields["policy"]
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

func TestPostPolicyDocumentErrorsAreS3s(t *testing.T) {
	exp := `"expiration": "` + testNow.Add(time.Hour).Format(time.RFC3339) + `"`
	withCondition := func(cond string) string { return standardConditions(testNow.Add(time.Hour), ", "+cond) }
	cases := []struct {
		name   string
		policy string // JSON; "-" plus text: the policy field as sent
		code   s3err.Code
		want   string
	}{
		{"empty policy", "-", s3err.InvalidPolicyDocument, "Invalid Policy: Expecting '{' but found End-of-Input"},
		{"not base64", "-invalid_base64", s3err.InvalidPolicyDocument, "Invalid Policy: invalid Base64 encoding."},
		{"not JSON", "invalid json", s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"a member the language lacks", `{"conditions": [], ` + exp + `, "Statement": []}`, s3err.InvalidPolicyDocument, "Invalid Policy: Unexpected: 'statement'"},
		{"EXPIRATION is not expiration", `{"EXPIRATION": "2144-11-08T04:19:33Z", "conditions": []}`, s3err.InvalidPolicyDocument, "Invalid Policy: Unexpected: 'expiration'"},
		{"missing expiration", `{"conditions": []}`, s3err.InvalidPolicyDocument, "Invalid Policy: Policy missing expiration."},
		{"expiration not a string", `{"expiration": true, "conditions": []}`, s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"expiration unreadable", `{"expiration": "invalid", "conditions": []}`, s3err.InvalidPolicyDocument, "Invalid Policy: Invalid 'expiration' value: 'invalid'"},
		{"missing conditions", `{` + exp + `}`, s3err.InvalidPolicyDocument, "Invalid Policy: Policy missing conditions."},
		{"conditions not a list", `{` + exp + `, "conditions": true}`, s3err.InvalidPolicyDocument, "Invalid Policy: Invalid 'conditions' value: must be a List."},
		{"condition neither list nor object", `{` + exp + `, "conditions": [true]}`, s3err.InvalidPolicyDocument, "Invalid Policy: Invalid condition test: must be a List or Object."},
		{"empty list condition", withCondition(`[]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid Condition: missing operation identifier."},
		{"unknown operation", withCondition(`["invalid", "$content-type", "a"]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid Condition: unknown operation 'invalid'."},
		{"eq with four items", withCondition(`["eq", "$content-type", "a", "b"]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid eq: wrong number of arguments."},
		{"range with one bound", withCondition(`["content-length-range", 0]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid content-length-range: wrong number of arguments."},
		{"field not a string", withCondition(`["eq", false, "a"]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"value not a string", withCondition(`["eq", "$content-type", true]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"field without $ fails", withCondition(`["eq", "content-type", "binary/octet-stream"]`), s3err.AccessDenied,
			`Invalid according to Policy: Policy Condition failed: ["eq", "content-type", "binary/octet-stream"]`},
		{"range bound a boolean", withCondition(`["content-length-range", 12, false]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"range bound a fraction", withCondition(`["content-length-range", 0, 512.0]`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"range bound a word fails", withCondition(`["content-length-range", "test", "10"]`), s3err.AccessDenied,
			`Invalid according to Policy: Policy Condition failed: ["content-length-range", "test", "10"]`},
		{"simple condition of two", withCondition(`{"expires": "exp", "cache": "smth"}`), s3err.InvalidPolicyDocument,
			"Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified."},
		{"simple condition a boolean", withCondition(`{"expires": true}`), s3err.InvalidPolicyDocument,
			"Invalid Policy: Invalid Simple-Condition: value must be a string."},
		{"simple condition null", withCondition(`{"success_action_redirect": null}`), s3err.InvalidPolicyDocument, "Invalid Policy: Invalid JSON."},
		{"condition fails, quoted with spaces", withCondition(`["eq","$key","expected-key"]`), s3err.AccessDenied,
			`Invalid according to Policy: Policy Condition failed: ["eq", "$key", "expected-key"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := postFixture(tc.policy, nil)
			if tc.policy != "" && tc.policy[0] == '-' {
				raw := tc.policy[1:]
				form = postFixture("", nil)
				form.Fields["policy"] = raw
				form.Fields["x-amz-signature"] = postSign(testSecret, testNow.Format(scopeDateLayout), testRegion, raw)
			}
			e := postError(t, form)
			if e.Code != tc.code || e.Message != tc.want {
				t.Fatalf("got %s %q, want %s %q", e.Code, e.Message, tc.code, tc.want)
			}
		})
	}
}

func TestPostLengthRangeBoundsMayBeStrings(t *testing.T) {
	auth, err := testVerifier().VerifyPost(postFixture(standardConditions(testNow.Add(time.Hour), `, ["content-length-range", "5", "10"]`), nil))
	if err != nil {
		t.Fatalf("VerifyPost: %v", err)
	}
	if auth.Length == nil || auth.Length.Min != 5 || auth.Length.Max != 10 {
		t.Fatalf("length = %+v, want 5..10", auth.Length)
	}
	small, large := s3err.As(auth.Length.Check(1)), s3err.As(auth.Length.Check(12))
	if small.Message != "Your proposed upload is smaller than the minimum allowed size" {
		t.Errorf("too small: %q", small.Message)
	}
	if large.Message != "Your proposed upload exceeds the maximum allowed size" {
		t.Errorf("too large: %q", large.Message)
	}
	if v, _ := field(small, "MinSizeAllowed"); v != "5" {
		t.Errorf("MinSizeAllowed = %q", v)
	}
	if v, _ := field(large, "MaxSizeAllowed"); v != "10" {
		t.Errorf("MaxSizeAllowed = %q", v)
	}
}
