package sigv4

import (
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// A browser-based upload (S3's POST Object) authenticates with form fields
// instead of a signed request: policy (a base64 JSON document of
// conditions), x-amz-algorithm, x-amz-credential, x-amz-date and
// x-amz-signature, the hex HMAC-SHA256 of the base64 policy under the
// client key's SigV4 signing key. Nothing else of the request is signed, so
// everything the upload does must be pinned by the policy. Only the
// signature is checked here; the policy's document and conditions are
// internal/postform's, which the caller asks once the signature verified.

// Form field names (lower case: S3 matches form field names without regard
// to case).
const (
	postFieldPolicy     = "policy"
	postFieldAlgorithm  = "x-amz-algorithm"
	postFieldCredential = "x-amz-credential"
	postFieldDate       = "x-amz-date"
	postFieldSignature  = "x-amz-signature"
)

// postAuthFields are the fields of a SigV4 POST, in the order S3 asks for
// a missing one.
var postAuthFields = []string{postFieldAlgorithm, postFieldCredential, postFieldDate, postFieldSignature, postFieldPolicy}

// PostCredential is who signed a POST Object form's policy.
type PostCredential struct {
	AccessKeyID string
	// Anonymous: the form carries no policy or signature at all; the
	// caller decides (S3 allows that only on a publicly writable bucket).
	Anonymous bool
}

// VerifyPostSignature checks a POST Object form's signature over its policy
// field (in constant time), given the fields before the file by lower-case
// name. It does not read the policy: a verified signature only says the
// key's holder wrote it. Errors are *s3err.Error with S3's codes.
func (v *Verifier) VerifyPostSignature(fields map[string]string) (*PostCredential, error) {
	credential, err := v.verifyPostSignature(fields)
	if err != nil {
		return nil, err
	}
	return credential, nil
}

func (v *Verifier) verifyPostSignature(f map[string]string) (*PostCredential, *s3err.Error) {
	if _, v2 := f["awsaccesskeyid"]; v2 {
		// A SigV2 POST (AWSAccessKeyId, signature): s3cond verifies SigV4 only.
		return nil, errUnsupportedAuthMechanism()
	}
	if !hasAnyField(f, postAuthFields) {
		return &PostCredential{Anonymous: true}, nil
	}
	for _, name := range postAuthFields {
		if _, ok := f[name]; !ok {
			return nil, missingPostField(name)
		}
	}
	if f[postFieldAlgorithm] != signingAlgorithm {
		return nil, s3err.Newf(s3err.InvalidArgument, "Only %s is supported", signingAlgorithm).
			With("ArgumentName", "X-Amz-Algorithm").
			With("ArgumentValue", f[postFieldAlgorithm])
	}
	scope, perr := v.postScope(f[postFieldCredential], f[postFieldDate])
	if perr != nil {
		return nil, perr
	}
	secret, ok := v.Credentials.Secret(scope.accessKeyID)
	if !ok {
		return nil, s3err.New(s3err.InvalidAccessKeyID).With("AWSAccessKeyId", scope.accessKeyID)
	}
	key := v.signingKey(scope, secret)
	policy := f[postFieldPolicy]
	if !signatureMatches(key, policy, f[postFieldSignature]) {
		return nil, s3err.New(s3err.SignatureDoesNotMatch).
			With("AWSAccessKeyId", scope.accessKeyID).
			With("StringToSign", policy).
			With("SignatureProvided", f[postFieldSignature]).
			With("StringToSignBytes", spacedHex(policy))
	}
	return &PostCredential{AccessKeyID: scope.accessKeyID}, nil
}

// postScope parses x-amz-credential and x-amz-date and checks the scope
// against the verifier's region and service, as for a signed request. The
// words are S3's answers to a form: a credential error names the field as
// S3 spells it, without the "Error parsing the X-Amz-Credential parameter;"
// prefix a presigned URL gets, and the date error keeps S3's "formated".
func (v *Verifier) postScope(credential, rawDate string) (credentialScope, *s3err.Error) {
	invalid := func(detail string) *s3err.Error {
		return s3err.Newf(s3err.InvalidArgument, "%s", detail).
			With("ArgumentName", "X-Amz-Credential").
			With("ArgumentValue", credential)
	}
	scope, ok := parseCredential(credential)
	if !ok {
		return credentialScope{}, invalid(credentialFormatHint)
	}
	amzDate, err := time.Parse(amzDateLayout, rawDate)
	if err != nil {
		return credentialScope{}, s3err.Newf(s3err.InvalidArgument, "X-Amz-Date must be formated via ISO8601 Long format").
			With("ArgumentName", "X-Amz-Date").
			With("ArgumentValue", rawDate)
	}
	if perr := v.checkScope(scope, amzDate, invalid, presignDateMismatch); perr != nil {
		return credentialScope{}, perr
	}
	return scope, nil
}

func hasAnyField(fields map[string]string, names []string) bool {
	for _, name := range names {
		if _, ok := fields[name]; ok {
			return true
		}
	}
	return false
}

// missingPostField is S3's answer to a POST without one of the fields it
// needs (named as S3 names them in the message).
func missingPostField(name string) *s3err.Error {
	display := name
	if strings.HasPrefix(name, "x-amz-") {
		display = "X-Amz-" + strings.ToUpper(name[6:7]) + name[7:]
	}
	return s3err.Newf(s3err.InvalidArgument, "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", display).
		With("ArgumentName", display).
		With("ArgumentValue", "")
}
