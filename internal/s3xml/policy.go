package s3xml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/s3cond/s3cond/s3err"
)

// Bucket policies. A bucket policy is the one configuration body that is
// JSON, not XML. Its reader lives here, beside the XML readers, because this
// package is where s3cond reads client bodies: the same bounded read
// (readBounded), the same rule that a body s3cond could read one way and a
// store another is refused, and S3's error for a body that fails.
//
// JSON's traps are the XML ones in another syntax: a key given twice
// (encoding/json keeps the last, another parser the first), a key in other
// letter case (encoding/json matches struct fields ignoring case), invalid
// UTF-8 (replaced silently), deep nesting. Each is refused before the
// policy is interpreted, so the statements read here are the store's.

// MaxPolicyBytes is S3's limit on a bucket policy (20 KB).
const MaxPolicyBytes = 20 << 10

// maxPolicyDepth bounds nesting: a Condition block sits five levels down
// (policy, Statement list, statement, Condition, operator, key's list).
const maxPolicyDepth = 8

// Policy is a bucket policy as read.
type Policy struct {
	// Body is the document as read: the bytes to forward.
	Body       []byte
	Statements []PolicyStatement
}

// PolicyStatement is what s3cond reads of one statement. Lists hold every
// value given, a single string being a list of one.
type PolicyStatement struct {
	Effect string
	// Principals are "*" (a bare "*" Principal) or "Type:value" ("AWS:*",
	// "AWS:arn:aws:iam::1:root", "CanonicalUser:...", "Service:...").
	Principals []string
	// NotPrincipal: the statement names its principals by exclusion.
	NotPrincipal bool
	Actions      []string
	NotAction    bool
	Resources    []string
	NotResource  bool
}

// malformedPolicy is S3's answer to a policy it cannot read.
func malformedPolicy(format string, args ...any) *s3err.Error {
	return s3err.Newf(s3err.MalformedPolicy, format, args...)
}

// ReadPolicy reads a bucket policy of at most MaxPolicyBytes.
func ReadPolicy(r io.Reader) (Policy, error) {
	data, err := readBounded(r, MaxPolicyBytes, s3err.MalformedPolicy, s3err.IncompleteBody)
	if err != nil {
		if s3err.Is(err, s3err.MalformedPolicy) {
			return Policy{}, malformedPolicy("Policies must be at most 20 KB.")
		}
		return Policy{}, err
	}
	if len(data) == 0 || data[0] != '{' || !utf8.Valid(data) {
		return Policy{}, malformedPolicy("Policies must be valid JSON and the first byte must be '{'")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if err := checkJSONValue(d, 0, false); err != nil {
		return Policy{}, malformedPolicy("Policies must be valid JSON: %v", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return Policy{}, malformedPolicy("Policies must be valid JSON: data after the policy")
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return Policy{}, malformedPolicy("Policies must be valid JSON: %v", err)
	}
	statement, err := field(doc, "Statement")
	if err != nil {
		return Policy{}, err
	}
	statements, err := readStatements(statement)
	if err != nil {
		return Policy{}, err
	}
	return Policy{Body: data, Statements: statements}, nil
}

// checkJSONValue reads one JSON value from d, refusing nesting deeper than
// maxPolicyDepth, an object key given twice (as field matches keys: Unicode
// simple folding, so "Reſource" is "Resource" twice) and, outside a
// Condition block, a key that is not ASCII: the policy grammar's keys
// (Statement, Effect, Resource, AWS, ...) are, and a key folding onto one
// of them is a second spelling a parser may take or not. A Condition's
// keys may name tags, which may be any letters; s3cond reads none of them.
func checkJSONValue(d *json.Decoder, depth int, inCondition bool) error {
	if depth > maxPolicyDepth {
		return fmt.Errorf("nested deeper than %d", maxPolicyDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		// The policy grammar has no null; encoding/json reads one as an
		// absent member, another parser as a member given, and
		// "NotPrincipal": null beside a Principal would be each.
		return errors.New("null is not a policy value")
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	keys := map[string]bool{}
	for d.More() {
		condition := inCondition
		if delim == '{' {
			tok, err := d.Token()
			if err != nil {
				return err
			}
			key := tok.(string)
			if !inCondition && !isASCII(key) {
				return fmt.Errorf("the key %q is not ASCII", key)
			}
			name := foldKey(key)
			if keys[name] {
				return fmt.Errorf("the key %q is given twice", key)
			}
			keys[name] = true
			condition = condition || name == foldKey("Condition")
		}
		if err := checkJSONValue(d, depth+1, condition); err != nil {
			return err
		}
	}
	_, err = d.Token() // the closing delimiter
	return err
}

// foldKey maps a key to one spelling of its strings.EqualFold class: each
// rune becomes the least rune of its simple folding orbit (k, K and the
// Kelvin sign K all become K), so two keys EqualFold matches share it.
func foldKey(key string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, key)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// field is doc's member named name, ignoring case as encoding/json does.
// checkJSONValue refused a key two members share; should two still match,
// the policy is refused rather than one of them taken in map order.
func field(doc map[string]any, name string) (any, error) {
	var found any
	matches := 0
	for k, v := range doc {
		if strings.EqualFold(k, name) {
			found = v
			matches++
		}
	}
	if matches > 1 {
		return nil, malformedPolicy("The policy gives %s more than once.", name)
	}
	return found, nil
}

func readStatements(v any) ([]PolicyStatement, error) {
	var list []any
	switch s := v.(type) {
	case map[string]any:
		list = []any{s}
	case []any:
		list = s
	default:
		return nil, malformedPolicy("Missing required field Statement")
	}
	out := make([]PolicyStatement, 0, len(list))
	for _, item := range list {
		doc, ok := item.(map[string]any)
		if !ok {
			return nil, malformedPolicy("A Statement must be an object")
		}
		st, err := readStatement(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func readStatement(doc map[string]any) (PolicyStatement, error) {
	var st PolicyStatement
	effect, err := field(doc, "Effect")
	if err != nil {
		return st, err
	}
	st.Effect, _ = effect.(string)
	principal, notPrincipal, err := fieldOrNot(doc, "Principal", "NotPrincipal")
	if err != nil {
		return st, err
	}
	st.NotPrincipal = notPrincipal != nil
	if principal == nil {
		principal = notPrincipal
	}
	if st.Principals, err = principals(principal); err != nil {
		return st, err
	}
	st.Actions, st.NotAction, err = listOf(doc, "Action", "NotAction")
	if err != nil {
		return st, err
	}
	if st.Resources, st.NotResource, err = listOf(doc, "Resource", "NotResource"); err != nil {
		return st, err
	}
	return st, checkAllowNames(st)
}

// checkAllowNames refuses an Allow (or a statement of an effect S3 does not
// know, which s3cond judges as an Allow) that names no action or no
// resource, as S3 does: a store that filled in what is missing ("every
// action") would allow more than s3cond checked.
func checkAllowNames(st PolicyStatement) error {
	if strings.EqualFold(st.Effect, "Deny") {
		return nil
	}
	if len(st.Actions) == 0 {
		return malformedPolicy("Policy has invalid action")
	}
	if len(st.Resources) == 0 {
		return malformedPolicy("Policy has invalid resource")
	}
	return nil
}

// fieldOrNot reads an element and its Not form (Action and NotAction). A
// statement with both is refused: s3cond would judge one, a store might
// obey the other.
func fieldOrNot(doc map[string]any, name, notName string) (positive, negative any, err error) {
	if positive, err = field(doc, name); err != nil {
		return nil, nil, err
	}
	if negative, err = field(doc, notName); err != nil {
		return nil, nil, err
	}
	if positive != nil && negative != nil {
		return nil, nil, malformedPolicy("A statement may have %s or %s, not both.", name, notName)
	}
	return positive, negative, nil
}

// principals flattens a Principal: "*" or {"Type": "v" or ["v", ...]}.
func principals(v any) ([]string, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{p}, nil
	case map[string]any:
		var out []string
		for kind, values := range p {
			list, err := stringList(values)
			if err != nil {
				return nil, malformedPolicy("Invalid principal in policy: %v", err)
			}
			for _, value := range list {
				out = append(out, kind+":"+value)
			}
		}
		return out, nil
	}
	return nil, malformedPolicy("Invalid principal in policy")
}

// listOf reads the field name or, failing that, notName, as a list of
// strings; not says which one it was.
func listOf(doc map[string]any, name, notName string) (values []string, not bool, err error) {
	v, notV, err := fieldOrNot(doc, name, notName)
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		v, not = notV, notV != nil
	}
	if v == nil {
		return nil, false, nil
	}
	values, err = stringList(v)
	if err != nil {
		return nil, false, malformedPolicy("Invalid %s in policy: %v", name, err)
	}
	return values, not, nil
}

// stringList reads a string or a list of strings.
func stringList(v any) ([]string, error) {
	switch s := v.(type) {
	case string:
		return []string{s}, nil
	case []any:
		out := make([]string, 0, len(s))
		for _, item := range s {
			str, ok := item.(string)
			if !ok {
				return nil, errors.New("not a string")
			}
			out = append(out, str)
		}
		return out, nil
	}
	return nil, errors.New("neither a string nor a list of strings")
}
