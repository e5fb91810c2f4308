package proxy

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/operation"
)

// The property of the value allow-list: for every operation of the
// allow-list and every parameter s3cond forwards, a hostile value is
// either refused or reaches the store in its checked form, and what the
// store receives holds no name-like value with a path in it, no number
// that is not one, no key the key policy refuses.

// probeRule is one row of the allow-list as a request shape.
type probeRule struct {
	key  operation.Rule
	path string
}

// allProbeRules lists every row of the allow-list, in a fixed order.
func allProbeRules() []probeRule {
	var rules []probeRule
	for _, k := range operation.Rules() {
		path := "/"
		switch k.Level {
		case operation.BucketLevel:
			path = "/alpha"
		case operation.ObjectLevel:
			path = "/alpha/dir/k"
		}
		rules = append(rules, probeRule{k, path})
	}
	return rules
}

// copySourceParam and copySourceRangeParam stand for the copy headers in
// the list of parameters probed.
const (
	copySourceParam      = "header:x-amz-copy-source"
	copySourceRangeParam = "header:x-amz-copy-source-range"
)

// probedParams is every query parameter of the grammar table, a
// subresource, a hoisted header and the copy headers.
func probedParams() []string {
	names := []string{"uploadId", "tagging", "x-amz-acl", copySourceParam, copySourceRangeParam,
		"header:X-Amz-Meta-A", "header:Content-Encoding", completeETagParam, completePartNumberParam}
	for name := range queryGrammar {
		names = append(names, name)
	}
	for _, g := range settingHeaderGrammars {
		names = append(names, "header:"+g.key)
	}
	sort.Strings(names)
	return names
}

// hostileValues are what an attacker sends: paths, encodings of them,
// control bytes, request-target delimiters, numbers that are not numbers.
var hostileValues = []string{
	"../../../../victim", "..", ".", "a/b", "a\\b", "%2e%2e%2fx", "..%2F..%2Fv", "%00", "\x00", "\r\nX-Evil: 1",
	"#frag", "?x=1", "&uploads", "=", " 1", "-1", "+1", "0x1f", "1e3", "99999999999999999999", "\xff\xfe",
	"\u202e", "a;b", "null", "2", "url", "true", "7", "bytes=0-1", "alpha/k?/../b", "alpha/k?versionId=v1",
	strings.Repeat("a", 1100),
}

// probeOne sends one request: rule's operation, with param set to value,
// and checks the property on what reached the store.
func probeOne(t *testing.T, v *valueProbe, rule probeRule, param, value string) {
	t.Helper()
	q := url.Values{}
	if rule.key.Subresource != "" {
		q.Set(rule.key.Subresource, map[bool]string{true: "u-1", false: ""}[rule.key.Subresource == "uploadId"])
	}
	header := http.Header{}
	var body []byte
	switch param {
	case completeETagParam, completePartNumberParam:
		if rule.key.Method != http.MethodPost || rule.key.Subresource != "uploadId" {
			return // the part list is CompleteMultipartUpload's alone
		}
		body = completeProbeBody(param, value)
	case copySourceParam:
		header.Set("X-Amz-Copy-Source", value)
	case copySourceRangeParam:
		header.Set("X-Amz-Copy-Source", "alpha/src")
		header.Set("X-Amz-Copy-Source-Range", value)
	default:
		if name, ok := strings.CutPrefix(param, "header:"); ok {
			header.Set(name, value)
			break
		}
		q.Set(param, value)
	}
	for name, values := range header {
		for _, hv := range values {
			if strings.ContainsAny(hv, "\r\n\x00") || !utf8.ValidString(hv) {
				return // no client can send it: net/http refuses such a header line
			}
		}
		header[name] = values
	}
	target := rule.path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	v.do(t, testKeyID, rule.key.Method, target, header, body)
	for _, r := range v.store.take() {
		checkStoreRequest(t, v.kp, r, rule, param, value)
		checkSentHeaders(t, r, rule, param, value)
		if body != nil {
			checkSentCompleteBody(t, v.store.bodyOf(r), rule, param, value)
		}
	}
}

// checkStoreRequest is the property, on one request the store received.
func checkStoreRequest(t *testing.T, kp KeyPolicy, r *http.Request, rule probeRule, param, value string) {
	t.Helper()
	where := rule.key.Method + " " + rule.path + " " + param + "=" + strconv.Quote(value)
	for i := 0; i < len(r.URL.RawQuery); i++ {
		if c := r.URL.RawQuery[i]; !isUnreserved(c) && c != '%' && c != '=' && c != '&' {
			t.Errorf("%s: the store's query %q has the raw byte %q", where, r.URL.RawQuery, c)
		}
	}
	sent, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		t.Errorf("%s: the store's query %q does not parse: %v", where, r.URL.RawQuery, err)
	}
	for name, values := range sent {
		if len(values) != 1 {
			t.Errorf("%s: the store got %s %d times", where, name, len(values))
			continue
		}
		checkSentValue(t, kp, where, name, values[0])
		if name == param && values[0] != expectedSent(param, value) {
			t.Errorf("%s: the store got %s=%q, not the checked value", where, name, values[0])
		}
	}
	if src := r.Header.Values("X-Amz-Copy-Source"); len(src) > 0 {
		checkSentCopySource(t, kp, where, src)
	}
	if rng := r.Header.Get("X-Amz-Copy-Source-Range"); rng != "" {
		if _, err := parseCopySourceRange(rng); err != nil || rng != strings.TrimSpace(rng) {
			t.Errorf("%s: the store got the range %q", where, rng)
		}
	}
}

// checkSentValue holds each value to its kind, independently of the
// grammar's own functions.
func checkSentValue(t *testing.T, kp KeyPolicy, where, name, v string) {
	t.Helper()
	switch name {
	case "uploadId", "versionId", "version-id-marker", "upload-id-marker":
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\\%?#&") || hasControlByte(v) || !utf8.ValidString(v) {
			t.Errorf("%s: the store got the name %s=%q", where, name, v)
		}
	case "partNumber", "part-number-marker", "max-keys", "max-uploads", "max-parts", "max-buckets":
		n, err := strconv.Atoi(v)
		if err != nil || strconv.Itoa(n) != v || n < 0 || n > maxS3Int || name == "partNumber" && (n < 1 || n > 10000) {
			t.Errorf("%s: the store got the number %s=%q", where, name, v)
		}
	case "marker", "key-marker", "start-after", "continuation-token":
		if kp.Check(v) != nil || !utf8.ValidString(v) || len(v) > operation.MaxKeyBytes {
			t.Errorf("%s: the store got the key %s=%q", where, name, v)
		}
	case "delimiter":
		// S3 takes control bytes here (s3-tests' "\n"); the query carries
		// them percent-encoded and the store's listing echoes them in XML.
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			t.Errorf("%s: the store got the delimiter %q", where, v)
		}
	case "prefix":
		if segments := strings.Split(v, "/"); !utf8.ValidString(v) || strings.ContainsRune(v, 0) || containsString(segments, "..") {
			t.Errorf("%s: the store got the prefix %q", where, v)
		}
	default:
		if hasControlByte(strings.ReplaceAll(v, "\t", " ")) || !utf8.ValidString(v) {
			t.Errorf("%s: the store got %s=%q", where, name, v)
		}
	}
}

func checkSentCopySource(t *testing.T, kp KeyPolicy, where string, src []string) {
	t.Helper()
	decoded, err := url.PathUnescape(src[0])
	path, version, _ := strings.Cut(decoded, "?versionId=")
	bucket, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if len(src) != 1 || err != nil || strings.ContainsAny(path, "?#") || strings.ContainsAny(version, "/\\?&#%") ||
		bucket != "alpha" || kp.Check(key) != nil || key == "" {
		t.Errorf("%s: the store got the copy source %q", where, src)
	}
}

// expectedSent is the form a value accepted for param is sent in.
func expectedSent(param, value string) string {
	if g := grammarOf(param); g.canonical != nil {
		return g.canonical(value)
	}
	return value
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestEveryParameterOfEveryOperationHoldsHostileValues runs the property
// over the whole allow-list, every parameter and every hostile value.
func TestEveryParameterOfEveryOperationHoldsHostileValues(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	rules, params := allProbeRules(), probedParams()
	// Every value on the plain call of each path level and method; the
	// path-bearing ones on every call (a full product is 100 000 requests).
	const pathValues = 10
	for _, rule := range rules {
		values := hostileValues[:pathValues]
		if rule.key.Subresource == "" || rule.key.Subresource == "uploadId" {
			values = hostileValues
		}
		for _, param := range params {
			for _, value := range values {
				probeOne(t, v, rule, param, value)
			}
		}
	}
}

// FuzzParameterValues is the same property for values the fuzzer finds;
// `go test` runs its seed corpus (every parameter, on a rule of each kind).
// Run it longer with: go test -run '^$' -fuzz FuzzParameterValues -fuzztime 60s ./proxy
func FuzzParameterValues(f *testing.F) {
	rules, params := allProbeRules(), probedParams()
	for i := range params {
		for _, value := range hostileValues[:6] {
			f.Add(uint16(i*7%len(rules)), uint16(i), value)
		}
	}
	v := newValueProbe(f, KeyPolicyStrict)
	f.Fuzz(func(t *testing.T, ruleIndex, paramIndex uint16, value string) {
		probeOne(t, v, rules[int(ruleIndex)%len(rules)], params[int(paramIndex)%len(params)], value)
	})
}
