package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// postSign signs a base64 policy as a browser-upload backend does: the
// SigV4 signing-key chain, then HMAC over the base64 text, in hex. It is
// written out here rather than calling deriveSigningKey, so a mistake there
// cannot cancel out.
func postSign(secret, date, region, policy string) string {
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	k := mac([]byte("AWS4"+secret), date)
	k = mac(k, region)
	k = mac(k, "s3")
	k = mac(k, "aws4_request")
	return hex.EncodeToString(mac(k, policy))
}

// postFixture is a form as boto3's generate_presigned_post builds it, for
// the test verifier's key and clock.
func postFixture(policyJSON string, extra map[string]string) PostForm {
	policy := base64.StdEncoding.EncodeToString([]byte(policyJSON))
	date := testNow.Format(scopeDateLayout)
	fields := map[string]string{
		"key":              "uploads/photo.jpg",
		"x-amz-algorithm":  signingAlgorithm,
		"x-amz-credential": testAccessKey + "/" + date + "/" + testRegion + "/s3/aws4_request",
		"x-amz-date":       testNow.Format(amzDateLayout),
		"policy":           policy,
		"x-amz-signature":  postSign(testSecret, date, testRegion, policy),
	}
	for k, v := range extra {
		fields[k] = v
	}
	return PostForm{Fields: fields, Bucket: "photos", Key: fields["key"]}
}

// standardConditions names the fields postFixture always sends.
func standardConditions(expiration time.Time, more string) string {
	date := testNow.Format(scopeDateLayout)
	return `{"expiration": "` + expiration.UTC().Format("2006-01-02T15:04:05.000Z") + `", "conditions": [
		{"bucket": "photos"}, ["starts-with", "$key", "uploads/"],
		{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
		{"x-amz-credential": "` + testAccessKey + "/" + date + "/" + testRegion + `/s3/aws4_request"},
		{"x-amz-date": "` + testNow.Format(amzDateLayout) + `"}` + more + `]}`
}

func TestVerifyPostAcceptsAGoodPolicy(t *testing.T) {
	v := testVerifier()
	form := postFixture(standardConditions(testNow.Add(time.Hour),
		`, ["content-length-range", 1, 1048576], ["starts-with", "$Content-Type", "image/"], {"x-amz-meta-owner": "ann"}, ["eq", "$success_action_status", "201"]`),
		map[string]string{"content-type": "image/jpeg", "x-amz-meta-owner": "ann", "success_action_status": "201", "x-ignore-tracking": "1"})
	auth, err := v.VerifyPost(form)
	if err != nil {
		t.Fatalf("VerifyPost: %v", err)
	}
	if auth.AccessKeyID != testAccessKey || auth.Anonymous {
		t.Fatalf("auth = %+v", auth)
	}
	if auth.Length == nil || auth.Length.Min != 1 || auth.Length.Max != 1048576 {
		t.Fatalf("length range = %+v", auth.Length)
	}
	if err := auth.Length.Check(0); !s3err.Is(err, s3err.EntityTooSmall) {
		t.Errorf("size 0: %v, want EntityTooSmall", err)
	}
	if err := auth.Length.Check(1048577); !s3err.Is(err, s3err.EntityTooLarge) {
		t.Errorf("size 1 MiB + 1: %v, want EntityTooLarge", err)
	}
	if err := auth.Length.Check(1048576); err != nil {
		t.Errorf("size 1 MiB: %v", err)
	}
}

func TestVerifyPostRefusals(t *testing.T) {
	good := standardConditions(testNow.Add(time.Hour), "")
	cases := []struct {
		name    string
		form    func() PostForm
		code    s3err.Code
		message string
	}{
		{"expired", func() PostForm { return postFixture(standardConditions(testNow.Add(-time.Second), ""), nil) },
			s3err.AccessDenied, "Invalid according to Policy: Policy expired."},
		{"wrong signature", func() PostForm {
			f := postFixture(good, nil)
			f.Fields["x-amz-signature"] = postSign("another secret", testNow.Format(scopeDateLayout), testRegion, f.Fields["policy"])
			return f
		}, s3err.SignatureDoesNotMatch, ""},
		{"policy changed after signing", func() PostForm {
			f := postFixture(good, nil)
			f.Fields["policy"] = base64.StdEncoding.EncodeToString([]byte(strings.Replace(good, "uploads/", "", 1)))
			return f
		}, s3err.SignatureDoesNotMatch, ""},
		{"key outside starts-with", func() PostForm {
			f := postFixture(good, map[string]string{"key": "other/photo.jpg"})
			f.Key = "other/photo.jpg"
			return f
		}, s3err.AccessDenied, `Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "uploads/"]`},
		{"filename leads out of the prefix", func() PostForm {
			f := postFixture(`{"expiration": "`+testNow.Add(time.Hour).Format(time.RFC3339)+`", "conditions": [["starts-with", "$key", "uploads/${f"], ["starts-with", "$x-amz-algorithm", ""], ["starts-with", "$x-amz-credential", ""], ["starts-with", "$x-amz-date", ""]]}`,
				map[string]string{"key": "uploads/${filename}"})
			f.Key = "uploads/evil"
			return f
		}, s3err.AccessDenied, ""},
		{"unpoliced field", func() PostForm { return postFixture(good, map[string]string{"x-amz-meta-extra": "1"}) },
			s3err.AccessDenied, "Invalid according to Policy: Extra input fields: x-amz-meta-extra"},
		{"unpoliced acl", func() PostForm { return postFixture(good, map[string]string{"acl": "public-read"}) },
			s3err.AccessDenied, "Invalid according to Policy: Extra input fields: acl"},
		{"metadata differs", func() PostForm {
			return postFixture(standardConditions(testNow.Add(time.Hour), `, ["eq", "$x-amz-meta-foo", ""]`), map[string]string{"x-amz-meta-foo": "barclamp"})
		}, s3err.AccessDenied, ""},
		{"policied field missing", func() PostForm {
			return postFixture(standardConditions(testNow.Add(time.Hour), `, ["starts-with", "$x-amz-meta-foo", "bar"]`), nil)
		}, s3err.AccessDenied, ""},
		{"other bucket", func() PostForm { f := postFixture(good, nil); f.Bucket = "elsewhere"; return f },
			s3err.AccessDenied, `Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "photos"]`},
		{"unknown key", func() PostForm {
			f := postFixture(good, nil)
			f.Fields["x-amz-credential"] = "AKIDNOBODY/" + testNow.Format(scopeDateLayout) + "/" + testRegion + "/s3/aws4_request"
			return f
		}, s3err.InvalidAccessKeyID, ""},
		{"missing signature", func() PostForm { f := postFixture(good, nil); delete(f.Fields, "x-amz-signature"); return f },
			s3err.InvalidArgument, "Bucket POST must contain a field named 'X-Amz-Signature'.  If it is specified, please check the order of the fields."},
		{"sigv2 form", func() PostForm { f := postFixture(good, nil); f.Fields["awsaccesskeyid"] = testAccessKey; return f },
			s3err.InvalidRequest, ""},
		{"missing expiration", func() PostForm { return postFixture(`{"conditions": []}`, nil) }, s3err.InvalidPolicyDocument, ""},
		{"EXPIRATION is not expiration", func() PostForm {
			return postFixture(`{"EXPIRATION": "`+testNow.Add(time.Hour).Format(time.RFC3339)+`", "conditions": []}`, nil)
		}, s3err.InvalidPolicyDocument, ""},
		{"missing conditions", func() PostForm {
			return postFixture(`{"expiration": "`+testNow.Add(time.Hour).Format(time.RFC3339)+`"}`, nil)
		}, s3err.InvalidPolicyDocument, ""},
		{"empty condition", func() PostForm { return postFixture(standardConditions(testNow.Add(time.Hour), `, {}`), nil) },
			s3err.InvalidPolicyDocument, ""},
		{"range with one bound", func() PostForm {
			return postFixture(standardConditions(testNow.Add(time.Hour), `, ["content-length-range", 0]`), nil)
		}, s3err.InvalidPolicyDocument, ""},
		{"negative range", func() PostForm {
			return postFixture(standardConditions(testNow.Add(time.Hour), `, ["content-length-range", -1, 0]`), nil)
		}, s3err.InvalidPolicyDocument, ""},
		{"unknown operator", func() PostForm {
			return postFixture(standardConditions(testNow.Add(time.Hour), `, ["ends-with", "$key", ".jpg"]`), nil)
		}, s3err.InvalidPolicyDocument, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testVerifier().VerifyPost(tc.form())
			if !s3err.Is(err, tc.code) {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if tc.message != "" && s3err.As(err).Message != tc.message {
				t.Errorf("message = %q, want %q", s3err.As(err).Message, tc.message)
			}
		})
	}
}

func TestVerifyPostConditionsAreCaseInsensitive(t *testing.T) {
	date := testNow.Format(scopeDateLayout)
	policy := `{"expiration": "` + testNow.Add(time.Hour).Format(time.RFC3339) + `", "conditions": [
		{"bUcKeT": "photos"}, ["StArTs-WiTh", "$KeY", "uploads/"], {"AcL": "private"},
		["EQ", "$X-Amz-Algorithm", "AWS4-HMAC-SHA256"],
		{"X-AMZ-CREDENTIAL": "` + testAccessKey + "/" + date + "/" + testRegion + `/s3/aws4_request"},
		["starts-with", "$x-amz-date", ""]]}`
	form := postFixture(policy, map[string]string{"acl": "private"})
	if _, err := testVerifier().VerifyPost(form); err != nil {
		t.Fatalf("VerifyPost: %v", err)
	}
}

func TestVerifyPostWithoutPolicyIsAnonymous(t *testing.T) {
	auth, err := testVerifier().VerifyPost(PostForm{Fields: map[string]string{"key": "k"}, Bucket: "b", Key: "k"})
	if err != nil || !auth.Anonymous {
		t.Fatalf("auth = %+v, err = %v; want anonymous", auth, err)
	}
}
