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

// postFixture is a form's fields as boto3's generate_presigned_post builds
// them, for the test verifier's key and clock.
func postFixture(policyJSON string, extra map[string]string) map[string]string {
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
	return fields
}

// standardConditions names the fields postFixture always sends. The
// signature does not read them: the conditions are internal/postform's
// to check (its policy_words_test.go).
func standardConditions(expiration time.Time, more string) string {
	date := testNow.Format(scopeDateLayout)
	return `{"expiration": "` + expiration.UTC().Format("2006-01-02T15:04:05.000Z") + `", "conditions": [
		{"bucket": "photos"}, ["starts-with", "$key", "uploads/"],
		{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
		{"x-amz-credential": "` + testAccessKey + "/" + date + "/" + testRegion + `/s3/aws4_request"},
		{"x-amz-date": "` + testNow.Format(amzDateLayout) + `"}` + more + `]}`
}

func TestVerifyPostSignatureAcceptsAGoodForm(t *testing.T) {
	v := testVerifier()
	form := postFixture(standardConditions(testNow.Add(time.Hour),
		`, ["content-length-range", 1, 1048576], ["starts-with", "$Content-Type", "image/"], {"x-amz-meta-owner": "ann"}, ["eq", "$success_action_status", "201"]`),
		map[string]string{"content-type": "image/jpeg", "x-amz-meta-owner": "ann", "success_action_status": "201", "x-ignore-tracking": "1"})
	auth, err := v.VerifyPostSignature(form)
	if err != nil {
		t.Fatalf("VerifyPostSignature: %v", err)
	}
	if auth.AccessKeyID != testAccessKey || auth.Anonymous {
		t.Fatalf("auth = %+v", auth)
	}
}

func TestVerifyPostSignatureRefusals(t *testing.T) {
	good := standardConditions(testNow.Add(time.Hour), "")
	cases := []struct {
		name    string
		form    func() map[string]string
		code    s3err.Code
		message string
	}{
		{"wrong signature", func() map[string]string {
			f := postFixture(good, nil)
			f["x-amz-signature"] = postSign("another secret", testNow.Format(scopeDateLayout), testRegion, f["policy"])
			return f
		}, s3err.SignatureDoesNotMatch, ""},
		{"policy changed after signing", func() map[string]string {
			f := postFixture(good, nil)
			f["policy"] = base64.StdEncoding.EncodeToString([]byte(strings.Replace(good, "uploads/", "", 1)))
			return f
		}, s3err.SignatureDoesNotMatch, ""},
		{"unknown key", func() map[string]string {
			f := postFixture(good, nil)
			f["x-amz-credential"] = "AKIDNOBODY/" + testNow.Format(scopeDateLayout) + "/" + testRegion + "/s3/aws4_request"
			return f
		}, s3err.InvalidAccessKeyID, ""},
		{"missing signature", func() map[string]string { f := postFixture(good, nil); delete(f, "x-amz-signature"); return f },
			s3err.InvalidArgument, "Bucket POST must contain a field named 'X-Amz-Signature'.  If it is specified, please check the order of the fields."},
		{"sigv2 form", func() map[string]string { f := postFixture(good, nil); f["awsaccesskeyid"] = testAccessKey; return f },
			s3err.InvalidRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testVerifier().VerifyPostSignature(tc.form())
			if !s3err.Is(err, tc.code) {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if tc.message != "" && s3err.As(err).Message != tc.message {
				t.Errorf("message = %q, want %q", s3err.As(err).Message, tc.message)
			}
		})
	}
}

func TestVerifyPostSignatureWithoutPolicyIsAnonymous(t *testing.T) {
	auth, err := testVerifier().VerifyPostSignature(map[string]string{"key": "k"})
	if err != nil || !auth.Anonymous {
		t.Fatalf("auth = %+v, err = %v; want anonymous", auth, err)
	}
}
