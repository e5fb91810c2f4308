package postform

import (
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// The policy of a form whose signature has verified (sigv4's
// postpolicy_test.go checks that part), against S3's answers word for
// word: clients and test suites compare them. Where S3's wire text is
// known from captured answers (LocalStack's tests validated against AWS,
// issue reports quoting S3), it is the one expected here; docs/fidelity.md
// lists the sources.

var policyNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

const policyCredential = "AKIDEXAMPLE/20260304/us-east-1/s3/aws4_request"

// policyForm is a form's fields as boto3's generate_presigned_post builds
// them (its signature is not checked here, so it is a stand-in).
func policyForm(policyJSON string, extra map[string]string) map[string]string {
	fields := map[string]string{
		"key":              "uploads/photo.jpg",
		"x-amz-algorithm":  "AWS4-HMAC-SHA256",
		"x-amz-credential": policyCredential,
		"x-amz-date":       policyNow.Format("20060102T150405Z"),
		FieldPolicy:        encodePolicy(policyJSON),
		FieldSignature:     "signature",
	}
	for k, v := range extra {
		fields[k] = v
	}
	return fields
}

// standardConditions names the fields policyForm always sends.
func standardConditions(expiration time.Time, more string) string {
	return `{"expiration": "` + expiration.UTC().Format("2006-01-02T15:04:05.000Z") + `", "conditions": [
		{"bucket": "photos"}, ["starts-with", "$key", "uploads/"],
		{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
		{"x-amz-credential": "` + policyCredential + `"},
		{"x-amz-date": "` + policyNow.Format("20060102T150405Z") + `"}` + more + `]}`
}

// checkForm checks fields' policy as posted to bucket "photos" with the key
// the form names.
func checkForm(fields map[string]string) (*LengthRange, error) {
	return CheckPolicy(fields, "photos", fields[FieldKey], policyNow)
}

func TestCheckPolicyAcceptsAGoodPolicy(t *testing.T) {
	form := policyForm(standardConditions(policyNow.Add(time.Hour),
		`, ["content-length-range", 1, 1048576], ["starts-with", "$Content-Type", "image/"], {"x-amz-meta-owner": "ann"}, ["eq", "$success_action_status", "201"]`),
		map[string]string{"content-type": "image/jpeg", "x-amz-meta-owner": "ann", "success_action_status": "201", "x-ignore-tracking": "1"})
	length, err := checkForm(form)
	if err != nil {
		t.Fatalf("CheckPolicy: %v", err)
	}
	if length == nil || length.Min != 1 || length.Max != 1048576 {
		t.Fatalf("length range = %+v", length)
	}
	if err := length.Check(0); !s3err.Is(err, s3err.EntityTooSmall) {
		t.Errorf("size 0: %v, want EntityTooSmall", err)
	}
	if err := length.Check(1048577); !s3err.Is(err, s3err.EntityTooLarge) {
		t.Errorf("size 1 MiB + 1: %v, want EntityTooLarge", err)
	}
	if err := length.Check(1048576); err != nil {
		t.Errorf("size 1 MiB: %v", err)
	}
}

func TestCheckPolicyRefusals(t *testing.T) {
	good := standardConditions(policyNow.Add(time.Hour), "")
	cases := []struct {
		name        string
		form        func() map[string]string
		bucket, key string // "" for "photos" and the form's key
		code        s3err.Code
		message     string
	}{
		{"expired", func() map[string]string { return policyForm(standardConditions(policyNow.Add(-time.Second), ""), nil) }, "", "",
			s3err.AccessDenied, "Invalid according to Policy: Policy expired."},
		{"key outside starts-with", func() map[string]string { return policyForm(good, map[string]string{"key": "other/photo.jpg"}) }, "", "",
			s3err.AccessDenied, `Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "uploads/"]`},
		{"filename leads out of the prefix", func() map[string]string {
			return policyForm(`{"expiration": "`+policyNow.Add(time.Hour).Format(time.RFC3339)+`", "conditions": [["starts-with", "$key", "uploads/${f"], ["starts-with", "$x-amz-algorithm", ""], ["starts-with", "$x-amz-credential", ""], ["starts-with", "$x-amz-date", ""]]}`,
				map[string]string{"key": "uploads/${filename}"})
		}, "", "uploads/evil", s3err.AccessDenied, ""},
		{"unpoliced field", func() map[string]string { return policyForm(good, map[string]string{"x-amz-meta-extra": "1"}) }, "", "",
			s3err.AccessDenied, "Invalid according to Policy: Extra input fields: x-amz-meta-extra"},
		{"unpoliced acl", func() map[string]string { return policyForm(good, map[string]string{"acl": "public-read"}) }, "", "",
			s3err.AccessDenied, "Invalid according to Policy: Extra input fields: acl"},
		{"metadata differs", func() map[string]string {
			return policyForm(standardConditions(policyNow.Add(time.Hour), `, ["eq", "$x-amz-meta-foo", ""]`), map[string]string{"x-amz-meta-foo": "barclamp"})
		}, "", "", s3err.AccessDenied, ""},
		{"policied field missing", func() map[string]string {
			return policyForm(standardConditions(policyNow.Add(time.Hour), `, ["starts-with", "$x-amz-meta-foo", "bar"]`), nil)
		}, "", "", s3err.AccessDenied, ""},
		{"other bucket", func() map[string]string { return policyForm(good, nil) }, "elsewhere", "",
			s3err.AccessDenied, `Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "photos"]`},
		{"missing expiration", func() map[string]string { return policyForm(`{"conditions": []}`, nil) }, "", "", s3err.InvalidPolicyDocument, ""},
		{"EXPIRATION is not expiration", func() map[string]string {
			return policyForm(`{"EXPIRATION": "`+policyNow.Add(time.Hour).Format(time.RFC3339)+`", "conditions": []}`, nil)
		}, "", "", s3err.InvalidPolicyDocument, ""},
		{"missing conditions", func() map[string]string {
			return policyForm(`{"expiration": "`+policyNow.Add(time.Hour).Format(time.RFC3339)+`"}`, nil)
		}, "", "", s3err.InvalidPolicyDocument, ""},
		{"empty condition", func() map[string]string { return policyForm(standardConditions(policyNow.Add(time.Hour), `, {}`), nil) }, "", "",
			s3err.InvalidPolicyDocument, ""},
		{"range with one bound", func() map[string]string {
			return policyForm(standardConditions(policyNow.Add(time.Hour), `, ["content-length-range", 0]`), nil)
		}, "", "", s3err.InvalidPolicyDocument, ""},
		{"negative range", func() map[string]string {
			return policyForm(standardConditions(policyNow.Add(time.Hour), `, ["content-length-range", -1, 0]`), nil)
		}, "", "", s3err.InvalidPolicyDocument, ""},
		{"unknown operator", func() map[string]string {
			return policyForm(standardConditions(policyNow.Add(time.Hour), `, ["ends-with", "$key", ".jpg"]`), nil)
		}, "", "", s3err.InvalidPolicyDocument, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := tc.form()
			bucket, key := tc.bucket, tc.key
			if bucket == "" {
				bucket = "photos"
			}
			if key == "" {
				key = form[FieldKey]
			}
			_, err := CheckPolicy(form, bucket, key, policyNow)
			if !s3err.Is(err, tc.code) {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if tc.message != "" && s3err.As(err).Message != tc.message {
				t.Errorf("message = %q, want %q", s3err.As(err).Message, tc.message)
			}
		})
	}
}

func TestCheckPolicyConditionsAreCaseInsensitive(t *testing.T) {
	policy := `{"expiration": "` + policyNow.Add(time.Hour).Format(time.RFC3339) + `", "conditions": [
		{"bUcKeT": "photos"}, ["StArTs-WiTh", "$KeY", "uploads/"], {"AcL": "private"},
		["EQ", "$X-Amz-Algorithm", "AWS4-HMAC-SHA256"],
		{"X-AMZ-CREDENTIAL": "` + policyCredential + `"},
		["starts-with", "$x-amz-date", ""]]}`
	if _, err := checkForm(policyForm(policy, map[string]string{"acl": "private"})); err != nil {
		t.Fatalf("CheckPolicy: %v", err)
	}
}

func TestPolicyDocumentErrorsAreS3s(t *testing.T) {
	exp := `"expiration": "` + policyNow.Add(time.Hour).Format(time.RFC3339) + `"`
	withCondition := func(cond string) string { return standardConditions(policyNow.Add(time.Hour), ", "+cond) }
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
			form := policyForm(tc.policy, nil)
			if tc.policy != "" && tc.policy[0] == '-' {
				form[FieldPolicy] = tc.policy[1:]
			}
			_, err := checkForm(form)
			e := s3err.As(err)
			if e == nil || e.Code != tc.code || e.Message != tc.want {
				t.Fatalf("got %v, want %s %q", err, tc.code, tc.want)
			}
		})
	}
}

func TestLengthRangeBoundsMayBeStrings(t *testing.T) {
	length, err := checkForm(policyForm(standardConditions(policyNow.Add(time.Hour), `, ["content-length-range", "5", "10"]`), nil))
	if err != nil {
		t.Fatalf("CheckPolicy: %v", err)
	}
	if length == nil || length.Min != 5 || length.Max != 10 {
		t.Fatalf("length = %+v, want 5..10", length)
	}
	small, large := s3err.As(length.Check(1)), s3err.As(length.Check(12))
	if small.Message != "Your proposed upload is smaller than the minimum allowed size" {
		t.Errorf("too small: %q", small.Message)
	}
	if large.Message != "Your proposed upload exceeds the maximum allowed size" {
		t.Errorf("too large: %q", large.Message)
	}
	if v, _ := extraField(small, "MinSizeAllowed"); v != "5" {
		t.Errorf("MinSizeAllowed = %q", v)
	}
	if v, _ := extraField(large, "MaxSizeAllowed"); v != "10" {
		t.Errorf("MaxSizeAllowed = %q", v)
	}
}

func TestMissingKeyIsS3sMissingField(t *testing.T) {
	e := s3err.As(MissingKey())
	if e.Code != s3err.InvalidArgument || e.Message != "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields." {
		t.Fatalf("got %s %q", e.Code, e.Message)
	}
	if v, _ := extraField(e, "ArgumentName"); v != "key" {
		t.Errorf("ArgumentName = %q, want key", v)
	}
}

func extraField(e *s3err.Error, name string) (string, bool) {
	for _, f := range e.Extra {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}
