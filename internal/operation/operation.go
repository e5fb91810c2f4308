// Package operation names the S3 operation a request makes, from the
// allow-list of every call s3cond forwards (allowlist.go), and reads what
// the request addresses (target.go). It looks only at the method, path,
// query and headers, before anything is authenticated or sent.
package operation

import (
	"mime"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/s3cond/s3cond/internal/requestline"
	"github.com/s3cond/s3cond/s3err"
)

// Operation is the S3 API call a request makes, by its S3 name. s3cond
// needs it for four decisions: whether the call is forwarded at all (the
// allow-list in allowlist.go), whether it writes (authorisation), whether
// it can carry write conditions (leases), and what to name it in logs and
// metrics.
type Operation string

func (o Operation) String() string { return string(o) }

// Writes reports whether the operation changes state, so needs a read-write key.
func (o Operation) Writes() bool { return allowList.writes[o] }

// IsSubresource reports whether a query parameter selects an operation of
// the allow-list.
func IsSubresource(name string) bool { return allowList.subresources[name] }

// OrdinaryParameters are the query parameters that refine an operation
// without naming another one (ordinaryParameters), in no order.
func OrdinaryParameters() []string {
	names := make([]string, 0, len(ordinaryParameters))
	for name := range ordinaryParameters {
		names = append(names, name)
	}
	return names
}

// Rule is one row of the allow-list as Classify indexes it: the request's
// path level, method and subresource ("" for the plain resource) and the
// operation they make.
type Rule struct {
	Level       PathLevel
	Method      string
	Subresource string
	Op          Operation
}

// Rules lists every row of the allow-list, ordered by level, method and
// subresource, for tests that try each one.
func Rules() []Rule {
	rules := make([]Rule, 0, len(allowList.rules))
	for key, op := range allowList.rules {
		rules = append(rules, Rule{Level: key.level, Method: key.method, Subresource: key.sub, Op: op})
	}
	sort.Slice(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Subresource < b.Subresource
	})
	return rules
}

// ruleKey selects one row of the allow-list.
type ruleKey struct {
	level  PathLevel
	method string
	sub    string
}

// operationTable is the allow-list indexed for Classify.
type operationTable struct {
	rules map[ruleKey]Operation
	// writes says which operations need a read-write grant.
	writes map[Operation]bool
	// subresources are the query parameters that select an operation.
	subresources map[string]bool
}

// allowList is built once from the tables of allowlist.go; it is never
// changed afterwards.
var allowList = buildOperationTable()

func buildOperationTable() operationTable {
	t := operationTable{rules: map[ruleKey]Operation{}, writes: map[Operation]bool{}, subresources: map[string]bool{}}
	add := func(r opRule) {
		t.rules[ruleKey{r.level, r.method, r.sub}] = r.op
		t.writes[r.op] = r.writes
		if r.sub != "" {
			t.subresources[r.sub] = true
		}
	}
	for _, r := range coreOperations {
		add(r)
	}
	for _, set := range []struct {
		level PathLevel
		subs  []subresource
	}{{BucketLevel, bucketSubresources}, {ObjectLevel, objectSubresources}} {
		for _, s := range set.subs {
			for _, v := range []struct {
				verb   verbs
				method string
				prefix string
			}{{get, http.MethodGet, "Get"}, {put, http.MethodPut, "Put"}, {del, http.MethodDelete, "Delete"}} {
				if s.verbs&v.verb != 0 {
					add(opRule{set.level, v.method, s.name, Operation(v.prefix + s.opName), v.method != http.MethodGet})
				}
			}
		}
	}
	// The refinements of refine().
	t.writes[CopyObject], t.writes[UploadPartCopy], t.writes[ListObjectsV2] = true, true, false
	return t
}

// Classify names the operation of a request on t, or returns S3's answer
// for a request that is no S3 operation s3cond forwards: 405
// MethodNotAllowed for a method S3 does not have, 501 NotImplemented for an
// unknown subresource, query parameter or method on that resource, 400
// BadRequest for an OPTIONS that is no CORS preflight.
func Classify(method string, t Target, q url.Values, h http.Header) (Operation, error) {
	level, err := pathLevelOf(t)
	if err != nil {
		return Refused, err
	}
	if !s3Methods[method] {
		return Refused, s3err.New(s3err.MethodNotAllowed).With("Method", method).With("ResourceType", level.resourceType())
	}
	sub, err := subresourceOf(q)
	if err != nil {
		return Refused, err
	}
	if method == http.MethodOptions {
		// A preflight goes to the actual request's URL, subresource and
		// all; it asks about the bucket's CORS rules whatever the call.
		sub = ""
	}
	op, ok := allowList.rules[ruleKey{level, method, sub}]
	if !ok {
		what := "the " + strings.ToLower(level.resourceType())
		if sub != "" {
			what = "the " + sub + " subresource of " + what
		}
		return Refused, s3err.Newf(s3err.NotImplemented, "s3cond does not forward %s on %s.", method, what)
	}
	if op == PreflightRequest {
		if err := CheckPreflightHeaders(h); err != nil {
			return Refused, err
		}
		return op, nil
	}
	return refine(op, q, h)
}

// refine tells apart the operations S3 selects by something other than the
// subresource: a copy source header, the listing version.
func refine(op Operation, q url.Values, h http.Header) (Operation, error) {
	if _, copySource := h["X-Amz-Copy-Source"]; copySource {
		switch op {
		case PutObject:
			return CopyObject, nil
		case UploadPart:
			return UploadPartCopy, nil
		}
		// A store that routed this as a copy would read a source bucket
		// nobody authorised.
		return Refused, s3err.Newf(s3err.InvalidRequest, "The x-amz-copy-source header is only valid on CopyObject and UploadPartCopy.")
	}
	if op == ListObjects && q.Get("list-type") == "2" {
		return ListObjectsV2, nil
	}
	if op == PostObject && !isFormData(h.Get("Content-Type")) {
		// S3's answer to a bucket POST of any other enclosure type.
		e := s3err.Precondition("Bucket POST must be of the enclosure-type multipart/form-data")
		return Refused, e
	}
	return op, nil
}

// isFormData reports whether a Content-Type is multipart/form-data.
func isFormData(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "multipart/form-data"
}

func pathLevelOf(t Target) (PathLevel, error) {
	switch {
	case t.Bucket == "" && t.Key == "":
		return ServiceLevel, nil
	case t.Bucket == "":
		return 0, s3err.Newf(s3err.InvalidURI, "The request path names an object without a bucket.")
	case reservedBuckets[t.Bucket]:
		return 0, ReservedBucketError(t.Bucket)
	case t.Key == "":
		return BucketLevel, nil
	}
	return ObjectLevel, nil
}

func (l PathLevel) resourceType() string {
	switch l {
	case ServiceLevel:
		return "SERVICE"
	case BucketLevel:
		return "BUCKET"
	}
	return "OBJECT"
}

// subresourceOf returns the one subresource parameter of q ("" if none). A
// query parameter the allow-list does not know, or two subresources at
// once, is 501: the store might read either as the operation.
func subresourceOf(q url.Values) (string, error) {
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names) // the same answer for the same request
	sub := ""
	for _, name := range names {
		switch {
		case allowList.subresources[name]:
			if sub != "" {
				return "", s3err.Newf(s3err.NotImplemented, "s3cond does not forward a request with two subresources (%s and %s).", sub, name)
			}
			sub = name
		case ordinaryParameters[name], isAmzQueryParameter(name), isSignatureV2Parameter(name):
		default:
			return "", NotForwardedParameter(name)
		}
	}
	return sub, nil
}

// isAmzQueryParameter accepts x-amz-* query parameters: presigned URL
// authentication and headers a presigning SDK hoisted into the query. A
// hoisted copy source is refused: s3cond authorises the copy source header,
// and a store that honours the parameter would copy from a bucket nobody
// authorised.
func isAmzQueryParameter(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasPrefix(lower, "x-amz-") && !strings.HasPrefix(lower, "x-amz-copy-source")
}

// isSignatureV2Parameter accepts the SigV2 presigned-URL parameters, which
// authenticate and are never forwarded. A request that was not verified by
// them is refused them after authentication (proxy/sigv2params.go), as
// here before SigV2 was accepted.
func isSignatureV2Parameter(name string) bool {
	return slices.Contains(requestline.SignatureV2Params, name)
}

// NotForwardedParameter is the answer to a query parameter s3cond does not
// forward.
func NotForwardedParameter(name string) error {
	return s3err.Newf(s3err.NotImplemented, "s3cond does not forward the query parameter %q.", name)
}

// IsReservedBucket reports whether a bucket name is one stores serve their
// admin APIs under (reservedBuckets), which s3cond serves under no name.
func IsReservedBucket(bucket string) bool { return reservedBuckets[bucket] }

// ReservedBucketError is the answer to a request naming a reserved bucket,
// as the client's name or the store's.
func ReservedBucketError(bucket string) error {
	return s3err.Newf(s3err.InvalidBucketName,
		"The bucket name %q is reserved: stores serve their admin API under it, and s3cond does not forward to it.", bucket).
		With("BucketName", bucket)
}

// A CORS preflight is OPTIONS with Origin and Access-Control-Request-Method
// (proxy/preflight.go forwards it): Classify names one PreflightRequest only
// when those headers are what S3 reads in one.

// corsMethods are the methods a CORS rule can allow (S3's AllowedMethod),
// spelled as S3 requires them: in capitals.
var corsMethods = map[string]bool{
	http.MethodGet: true, http.MethodPut: true, http.MethodPost: true, http.MethodDelete: true, http.MethodHead: true,
}

// CheckPreflightHeaders checks the headers of an OPTIONS request, with
// S3's answers: 400 BadRequest when Origin or Access-Control-Request-Method
// is missing or the method is none CORS knows, or a requested header name
// is not an HTTP token.
func CheckPreflightHeaders(h http.Header) error {
	origin := h.Values("Origin")
	switch {
	case len(origin) == 0 || origin[0] == "":
		return s3err.Newf(s3err.BadRequest, "Insufficient information. Origin request header needed.")
	case len(origin) > 1:
		return s3err.Newf(s3err.BadRequest, "A CORS preflight request carries one Origin header.")
	}
	method := h.Values("Access-Control-Request-Method")
	switch {
	case len(method) == 0 || method[0] == "":
		return s3err.Newf(s3err.BadRequest, "Invalid Access-Control-Request-Method: null")
	case len(method) > 1 || !corsMethods[method[0]]:
		return s3err.Newf(s3err.BadRequest, "Invalid Access-Control-Request-Method: %s", strings.Join(method, ","))
	}
	return checkRequestedHeaders(h.Values("Access-Control-Request-Headers"))
}

// checkRequestedHeaders accepts a comma-separated list of header names
// (over one or more header lines), blanks around the commas allowed.
func checkRequestedHeaders(values []string) error {
	list := strings.Join(values, ",")
	if textproto.TrimString(list) == "" {
		return nil
	}
	for _, name := range strings.Split(list, ",") {
		if !httpguts.ValidHeaderFieldName(textproto.TrimString(name)) {
			return s3err.Newf(s3err.BadRequest, `Access-Control-Request-Headers "%s" contains invalid character.`, name)
		}
	}
	return nil
}
