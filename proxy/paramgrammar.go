package proxy

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// The value allow-list. The operation allow-list (internal/operation) says which
// calls reach the store; this table says what each query parameter of those
// calls may hold. s3cond signs what it forwards with the store's own key,
// and stores build paths from these values: versitygw's posix store keeps a
// multipart upload in <bucket>/.sgwtmp/multipart/<sha256(key)>/<uploadId>,
// so an uploadId of ../../../../victim wrote, listed and deleted another
// bucket. Every value is checked here, before any lease or backend call,
// and the backend's query is rebuilt from the checked values
// (paramquery.go). docs/security.md lists the table for operators; keep
// the two in step.

// paramGrammar is one row: what a parameter's (decoded) value may be, and
// S3's answer when it is not.
type paramGrammar struct {
	// valid reports whether value is in the grammar; kp is the backend's
	// key policy, for values that are object keys.
	valid func(value string, kp KeyPolicy) bool
	// refuse is S3's error for a value outside it.
	refuse func(name, value string) *s3err.Error
	// canonical rewrites a valid value into the form sent on (numbers
	// without leading zeros); nil keeps the value.
	canonical func(value string) string
	// dropped says a valid value whose canonical form is empty is not
	// sent on at all, as its header's grammar drops it (hoisted headers).
	dropped bool
}

// maxNameBytes bounds name-like values: S3's upload and version IDs are far
// shorter, and no store needs more.
const maxNameBytes = 1024

// maxHeaderLikeBytes bounds a value that becomes a response header
// (response-*) or a hoisted request header (x-amz-* in the query).
const maxHeaderLikeBytes = 4096

// maxS3Int is S3's bound for its integer parameters (a Java int).
const maxS3Int = 1<<31 - 1

// queryGrammar is the table: every ordinary parameter and value-carrying
// subresource of the allow-list has a row. Subresources that only name an
// operation (uploads, acl, tagging, ...) must have an empty value
// (emptyValue); x-amz-* parameters other than authentication are hoisted
// headers (headerLikeValue).
var queryGrammar = map[string]paramGrammar{
	"uploadId":           {valid: nameToken, refuse: noSuchUpload},
	"versionId":          {valid: nameToken, refuse: invalidVersionID},
	"version-id-marker":  {valid: nameToken, refuse: invalidVersionID},
	"upload-id-marker":   {valid: nameToken, refuse: invalidArgumentValue},
	"partNumber":         intRange(1, 10000, invalidPartNumber),
	"part-number-marker": intRange(0, maxS3Int, notAnInteger),
	"max-keys":           intRange(0, maxS3Int, notAnInteger),
	"max-uploads":        intRange(0, maxS3Int, notAnInteger),
	"max-parts":          intRange(0, maxS3Int, notAnInteger),
	"max-buckets":        intRange(1, 10000, notAnInteger),
	"marker":             {valid: objectKey, refuse: invalidArgumentValue},
	"key-marker":         {valid: objectKey, refuse: invalidArgumentValue},
	"start-after":        {valid: objectKey, refuse: invalidArgumentValue},
	"continuation-token": {valid: objectKey, refuse: invalidContinuationToken},
	"prefix":             {valid: keyPrefix, refuse: invalidArgumentValue},
	"delimiter":          {valid: delimiterValue, refuse: invalidArgumentValue},
	"encoding-type":      oneOf(invalidEncodingType, "url"),
	"list-type":          oneOf(invalidArgumentValue, "2"),
	"fetch-owner":        booleanParam,
	"select-type":        oneOf(invalidArgumentValue, "2"),
	"id":                 {valid: configurationID, refuse: invalidArgumentValue},
	"x-id":               {valid: operationName, refuse: invalidArgumentValue},
	"bucket-region":      {valid: regionName, refuse: invalidArgumentValue},

	"response-cache-control":       {valid: headerLikeValue, refuse: invalidArgumentValue},
	"response-content-disposition": {valid: headerLikeValue, refuse: invalidArgumentValue},
	"response-content-encoding":    {valid: headerLikeValue, refuse: invalidArgumentValue},
	"response-content-language":    {valid: headerLikeValue, refuse: invalidArgumentValue},
	"response-content-type":        {valid: headerLikeValue, refuse: invalidArgumentValue},
	"response-expires":             {valid: headerLikeValue, refuse: invalidArgumentValue},
}

// emptyValue is the grammar of a subresource that names an operation.
var emptyValue = paramGrammar{valid: func(v string, _ KeyPolicy) bool { return v == "" }, refuse: invalidArgumentValue}

// hoistedHeader is the grammar of an x-amz-* query parameter other than
// presigned-URL authentication: a header an SDK moved into the query.
var hoistedHeader = paramGrammar{valid: headerLikeValue, refuse: invalidArgumentValue}

// grammarOf returns the row for a parameter operation.Classify accepted.
func grammarOf(name string) paramGrammar {
	if g, ok := queryGrammar[name]; ok {
		return g
	}
	if operation.IsSubresource(name) {
		return emptyValue
	}
	return hoistedHeaderGrammar(name)
}

// nameToken is a name a store may put into a path (upload and version IDs,
// their markers): one path segment of [A-Za-z0-9._~+=-], never "." or "..",
// so it holds no '/', '\', control byte or percent-encoding of one.
func nameToken(v string, _ KeyPolicy) bool {
	if v == "" || len(v) > maxNameBytes || v == "." || v == ".." {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isAlnum(c) || strings.IndexByte("._~+=-", c) >= 0) {
			return false
		}
	}
	return true
}

// objectKey is a value that names an object (listing markers; a
// continuation token, which versitygw makes of the last key): what S3
// accepts as a key and the backend's key policy lets through, as for the
// key in the URL.
func objectKey(v string, kp KeyPolicy) bool {
	return len(v) <= operation.MaxKeyBytes && utf8.ValidString(v) && kp.Check(v) == nil
}

// keyPrefix is a listing prefix: S3 takes any string (s3-tests lists
// with the prefix "/"). A prefix selects keys and names none, so a "." or
// empty segment only lists other keys of the same bucket; only a ".."
// segment, anywhere in it, is refused (a store that joins the prefix to the
// bucket's directory would leave it), and a NUL byte, under every key
// policy but opaque.
func keyPrefix(v string, kp KeyPolicy) bool {
	if len(v) > operation.MaxKeyBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return false
	}
	if kp == KeyPolicyOpaque {
		return true
	}
	for rest, more := v, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		if seg == ".." {
			return false
		}
	}
	return true
}

// delimiterValue is any short UTF-8 string but one holding a NUL byte: S3
// takes control bytes there (s3-tests lists with the delimiter "\n"), and
// the store's query carries them percent-encoded.
func delimiterValue(v string, _ KeyPolicy) bool {
	return len(v) <= operation.MaxKeyBytes && utf8.ValidString(v) && strings.IndexByte(v, 0) < 0
}

// headerLikeValue is what may become a header: UTF-8 without control
// bytes (a tab is allowed, as in a header), bounded.
func headerLikeValue(v string, _ KeyPolicy) bool {
	return len(v) <= maxHeaderLikeBytes && utf8.ValidString(v) && !hasControlByte(strings.ReplaceAll(v, "\t", " "))
}

// configurationID is the Id of an analytics, inventory, metrics or
// intelligent-tiering configuration: S3 allows letters, digits, '.', '-'
// and '_', up to 64 characters.
func configurationID(v string, _ KeyPolicy) bool {
	return asciiWord(v, 64, "._-") && v != "." && v != ".."
}

// operationName is the x-id an SDK adds ("GetObject").
func operationName(v string, _ KeyPolicy) bool { return asciiWord(v, 64, "") }

// regionName is a region ("eu-west-1").
func regionName(v string, _ KeyPolicy) bool { return asciiWord(v, 64, "-") }

func asciiWord(v string, maxLen int, extra string) bool {
	if v == "" || len(v) > maxLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) && strings.IndexByte(extra, v[i]) < 0 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func hasControlByte(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return true
		}
	}
	return false
}

// intRange is a decimal integer in [lo, hi]: digits only, no sign or
// space, sent on without leading zeros.
func intRange(lo, hi int64, refuse func(name, value string) *s3err.Error) paramGrammar {
	return paramGrammar{
		valid: func(v string, _ KeyPolicy) bool {
			n, ok := parseDecimal(v)
			return ok && n >= lo && n <= hi
		},
		refuse: refuse,
		canonical: func(v string) string {
			n, _ := parseDecimal(v)
			return strconv.FormatInt(n, 10)
		},
	}
}

// parseDecimal reads 1 to 18 ASCII digits (strconv.ParseInt also takes a
// sign and, with base 0, prefixes).
func parseDecimal(v string) (int64, bool) {
	if v == "" || len(v) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(v[i]-'0')
	}
	return n, true
}

// booleanParam is a boolean query parameter, read as booleanHeader reads
// one and sent on as "true" or "false".
var booleanParam = paramGrammar{
	valid: func(v string, _ KeyPolicy) bool {
		_, err := booleanHeader(v)
		return err == nil
	},
	refuse:    invalidArgumentValue,
	canonical: strings.ToLower,
}

func oneOf(refuse func(name, value string) *s3err.Error, values ...string) paramGrammar {
	return paramGrammar{valid: func(v string, _ KeyPolicy) bool {
		for _, allowed := range values {
			if v == allowed {
				return true
			}
		}
		return false
	}, refuse: refuse}
}

// S3's answers for values outside the grammar.

func noSuchUpload(string, string) *s3err.Error { return s3err.New(s3err.NoSuchUpload) }

func invalidVersionID(name, value string) *s3err.Error {
	if value == "" {
		return argumentError("Version id cannot be the empty string", name, value)
	}
	return argumentError("Invalid version id specified", name, value)
}

func invalidPartNumber(name, value string) *s3err.Error {
	return argumentError("Part number must be an integer between 1 and 10000, inclusive", name, value)
}

func notAnInteger(name, value string) *s3err.Error {
	return argumentError("Provided "+name+" not an integer or within integer range", name, value)
}

func invalidContinuationToken(name, value string) *s3err.Error {
	return argumentError("The continuation token provided is incorrect", name, value)
}

func invalidEncodingType(name, value string) *s3err.Error {
	return argumentError("Invalid Encoding Method specified in Request", name, value)
}

func invalidArgumentValue(name, value string) *s3err.Error {
	return argumentError("The value of the query parameter "+name+" is not valid", name, value)
}

// maxEchoedBytes bounds the part of a refused value the error document
// repeats.
const maxEchoedBytes = 256

func argumentError(message, name, value string) *s3err.Error {
	if len(value) > maxEchoedBytes {
		value = strings.ToValidUTF8(value[:maxEchoedBytes], "") + "..."
	}
	return s3err.Newf(s3err.InvalidArgument, "%s", message).With("ArgumentName", name).With("ArgumentValue", value)
}
