package sigv4

import (
	"net/http"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

const invalidTokenMessage = "The provided token is malformed or otherwise invalid."

// s3cond's client keys are permanent: S3 answers a token sent with a
// permanent key 400 InvalidToken, before the signature, in a header or a
// presigned URL alike.
func TestSessionTokenWithPermanentKeyIsInvalidToken(t *testing.T) {
	t.Run("header auth, token signed", func(t *testing.T) {
		r := signedRequest(t, "GET", "/bucket/key", "", signOptions{sessionToken: "FQoGZXIvYXdzEXAMPLE"})
		verifyCode(t, testVerifier(), r, s3err.InvalidToken, http.StatusBadRequest, invalidTokenMessage)
	})
	t.Run("header auth, token in the query", func(t *testing.T) {
		r := signedRequest(t, "GET", "/bucket/key?X-Amz-Security-Token=abc", "", signOptions{})
		verifyCode(t, testVerifier(), r, s3err.InvalidToken, http.StatusBadRequest, invalidTokenMessage)
	})
	for _, name := range []string{"X-Amz-Security%2DToken", "x-amz-security-token", "X-Amz-Security-Tok%65n"} {
		t.Run("header auth, token in the query as "+name, func(t *testing.T) {
			r := signedRequest(t, "GET", "/bucket/key?"+name+"=abc", "", signOptions{})
			verifyCode(t, testVerifier(), r, s3err.InvalidToken, http.StatusBadRequest, invalidTokenMessage)
		})
	}
	t.Run("header auth, token and a wrong signature", func(t *testing.T) {
		r := signedRequest(t, "GET", "/bucket/key", "", signOptions{sessionToken: "tok", secret: "not the secret"})
		verifyCode(t, testVerifier(), r, s3err.InvalidToken, http.StatusBadRequest, invalidTokenMessage)
	})
	t.Run("presigned, token signed", func(t *testing.T) {
		r := presignedRequest(t, "GET", "/bucket/key", time.Hour, signOptions{sessionToken: "tok"})
		verifyCode(t, testVerifier(), r, s3err.InvalidToken, http.StatusBadRequest, invalidTokenMessage)
	})
	t.Run("presigned, token added after signing", func(t *testing.T) {
		// versitygw's PresignedAuth_security_token_with_permanent_credentials.
		r := presignedRequest(t, "DELETE", "/bucket", time.Hour, signOptions{})
		r.URL.RawQuery += "&X-Amz-Security-Token=my_token"
		verifyCode(t, testVerifier(), r, s3err.InvalidToken, http.StatusBadRequest, invalidTokenMessage)
	})
	t.Run("an unknown key is still InvalidAccessKeyId", func(t *testing.T) {
		r := signedRequest(t, "GET", "/bucket/key", "", signOptions{sessionToken: "tok", accessKey: "AKIAUNKNOWN"})
		verifyCode(t, testVerifier(), r, s3err.InvalidAccessKeyID, http.StatusForbidden, "")
	})
	t.Run("a query value naming the parameter is no token", func(t *testing.T) {
		r := signedRequest(t, "GET", "/bucket?prefix=X-Amz-Security-Token", "", signOptions{})
		if _, err := testVerifier().Verify(r); err != nil {
			t.Fatal(err)
		}
	})
}

// With SessionTokens a token is part of the signed request like any other
// header or parameter: the verifier checks the signature over it.
func TestSessionTokensAcceptedWhenEnabled(t *testing.T) {
	v := testVerifier()
	v.SessionTokens = true
	for name, r := range map[string]*http.Request{
		"header":    signedRequest(t, "GET", "/bucket/key", "", signOptions{sessionToken: "tok"}),
		"presigned": presignedRequest(t, "GET", "/bucket/key", time.Hour, signOptions{sessionToken: "tok"}),
	} {
		if _, err := v.Verify(r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	r := presignedRequest(t, "GET", "/bucket/key", time.Hour, signOptions{})
	r.URL.RawQuery += "&X-Amz-Security-Token=added"
	verifyCode(t, v, r, s3err.SignatureDoesNotMatch, http.StatusForbidden, "")
}
