package s3xml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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
	if err := checkJSONValue(d, 0); err != nil {
		return Policy{}, malformedPolicy("Policies must be valid JSON: %v", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return Policy{}, malformedPolicy("Policies must be valid JSON: data after the policy")
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return Policy{}, malformedPolicy("Policies must be valid JSON: %v", err)
	}
	statements, err := readStatements(field(doc, "Statement"))
	if err != nil {
		return Policy{}, err
	}
	return Policy{Body: data, Statements: statements}, nil
}

// checkJSONValue reads one JSON value from d, refusing nesting deeper than
// maxPolicyDepth and an object key given twice (ignoring case).
func checkJSONValue(d *json.Decoder, depth int) error {
	if depth > maxPolicyDepth {
		return fmt.Errorf("nested deeper than %d", maxPolicyDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	keys := map[string]bool{}
	for d.More() {
		if delim == '{' {
			key, err := d.Token()
			if err != nil {
				return err
			}
			name := strings.ToLower(key.(string))
			if keys[name] {
				return fmt.Errorf("the key %q is given twice", key)
			}
			keys[name] = true
		}
		if err := checkJSONValue(d, depth+1); err != nil {
			return err
		}
	}
	_, err = d.Token() // the closing delimiter
	return err
}

// field is doc's member named name, ignoring case (keys are unique so
// ignoring case, checkJSONValue saw to it).
func field(doc map[string]any, name string) any {
	for k, v := range doc {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
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
	effect, _ := field(doc, "Effect").(string)
	st.Effect = effect
	principal, notPrincipal := field(doc, "Principal"), field(doc, "NotPrincipal")
	st.NotPrincipal = notPrincipal != nil
	if principal == nil {
		principal = notPrincipal
	}
	var err error
	if st.Principals, err = principals(principal); err != nil {
		return st, err
	}
	st.Actions, st.NotAction, err = listOf(doc, "Action", "NotAction")
	if err != nil {
		return st, err
	}
	st.Resources, st.NotResource, err = listOf(doc, "Resource", "NotResource")
	return st, err
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
	v := field(doc, name)
	if v == nil {
		v, not = field(doc, notName), field(doc, notName) != nil
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
