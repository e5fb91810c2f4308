package postform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// The form fields the policy treats apart (lower case: S3 matches form
// field names without regard to case).
const (
	FieldPolicy    = "policy"
	FieldSignature = "x-amz-signature"
	FieldBucket    = "bucket"
	FieldKey       = "key"
	ignorePrefix   = "x-ignore-"
)

// LengthRange is a content-length-range condition: the file's size in
// bytes must lie within [Min, Max].
type LengthRange struct{ Min, Max int64 }

// Check answers S3's 400 EntityTooSmall / EntityTooLarge for a size outside
// the range, in the words S3 sends (its error table's "... allowed object
// size." is not what it answers).
func (l *LengthRange) Check(size int64) error {
	switch {
	case l == nil:
		return nil
	case size < l.Min:
		return s3err.Newf(s3err.EntityTooSmall, "Your proposed upload is smaller than the minimum allowed size").
			With("ProposedSize", strconv.FormatInt(size, 10)).
			With("MinSizeAllowed", strconv.FormatInt(l.Min, 10))
	case size > l.Max:
		return s3err.Newf(s3err.EntityTooLarge, "Your proposed upload exceeds the maximum allowed size").
			With("ProposedSize", strconv.FormatInt(size, 10)).
			With("MaxSizeAllowed", strconv.FormatInt(l.Max, 10))
	}
	return nil
}

// Policy is a decoded POST policy: {"expiration": ..., "conditions": [...]}.
// The two top-level names are case-sensitive, as on S3; condition operators
// and field names are not.
type Policy struct {
	expiration time.Time
	conditions []policyCondition
}

type conditionOp uint8

const (
	opEq conditionOp = iota
	opStartsWith
	opLengthRange
	// opNeverHolds is a condition S3 parses but no form can meet: a field
	// name without "$", a content-length-range bound that is not a number.
	opNeverHolds
)

// policyCondition is one entry of the conditions list.
type policyCondition struct {
	op conditionOp
	// field is the form field it constrains, lower case, without "$";
	// name is the same as the policy spelled it, for error messages.
	field, name string
	value       string
	min, max    int64 // opLengthRange
	// text is how an opNeverHolds condition is quoted when it fails.
	text string
}

// S3's words for a policy it cannot read. Where S3's wire text is known
// (captured answers to real forms) it is used; the others are versitygw's,
// which models S3's.
const (
	policyInvalidJSON        = "Invalid Policy: Invalid JSON."
	policyMissingExpiration  = "Invalid Policy: Policy missing expiration."
	policyMissingConditions  = "Invalid Policy: Policy missing conditions."
	policyConditionsNotList  = "Invalid Policy: Invalid 'conditions' value: must be a List."
	policyConditionWrongType = "Invalid Policy: Invalid condition test: must be a List or Object."
	policyMissingOperation   = "Invalid Policy: Invalid Condition: missing operation identifier."
	policySimpleNotOne       = "Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified."
	policySimpleNotString    = "Invalid Policy: Invalid Simple-Condition: value must be a string."
)

// ParsePolicy decodes the form's policy field (base64 JSON). Its errors
// are S3's InvalidPolicyDocument, in S3's words.
func ParsePolicy(policy string) (Policy, *s3err.Error) {
	raw, perr := decodePolicy(policy)
	if perr != nil {
		return Policy{}, perr
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return Policy{}, invalidPolicy(policyInvalidJSON)
	}
	if unexpected := unexpectedMembers(top); len(unexpected) > 0 {
		return Policy{}, invalidPolicy("Invalid Policy: Unexpected: '" + unexpected[0] + "'")
	}
	expiration, perr := parseExpiration(top["expiration"])
	if perr != nil {
		return Policy{}, perr
	}
	doc := Policy{expiration: expiration}
	rawConditions, ok := top["conditions"]
	if !ok {
		return Policy{}, invalidPolicy(policyMissingConditions)
	}
	var conditions []json.RawMessage
	if err := json.Unmarshal(rawConditions, &conditions); err != nil || conditions == nil {
		return Policy{}, invalidPolicy(policyConditionsNotList)
	}
	for _, rawCond := range conditions {
		c, perr := parseCondition(rawCond)
		if perr != nil {
			return Policy{}, perr
		}
		doc.conditions = append(doc.conditions, c)
	}
	return doc, nil
}

// unexpectedMembers lists, lower-cased and sorted, the policy's top-level
// names other than "expiration" and "conditions" (which are
// case-sensitive: "EXPIRATION" is unexpected).
func unexpectedMembers(top map[string]json.RawMessage) []string {
	var names []string
	for name := range top {
		if name != "expiration" && name != "conditions" {
			names = append(names, strings.ToLower(name))
		}
	}
	sort.Strings(names)
	return names
}

func parseExpiration(raw json.RawMessage) (time.Time, *s3err.Error) {
	if raw == nil {
		return time.Time{}, invalidPolicy(policyMissingExpiration)
	}
	var expiration string
	if err := json.Unmarshal(raw, &expiration); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return time.Time{}, invalidPolicy(policyInvalidJSON)
	}
	t, err := time.Parse(time.RFC3339, expiration)
	if err != nil {
		return time.Time{}, invalidPolicy("Invalid Policy: Invalid 'expiration' value: '" + expiration + "'")
	}
	return t, nil
}

// parseCondition reads {"field": "value"}, ["eq"|"starts-with", "$field",
// "value"] or ["content-length-range", min, max].
func parseCondition(raw json.RawMessage) (policyCondition, *s3err.Error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		return parseSimpleCondition(raw)
	case len(raw) == 0 || raw[0] != '[':
		return policyCondition{}, invalidPolicy(policyConditionWrongType)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return policyCondition{}, invalidPolicy(policyInvalidJSON)
	}
	if len(list) == 0 {
		return policyCondition{}, invalidPolicy(policyMissingOperation)
	}
	op, ok := jsonString(list[0])
	if !ok {
		return policyCondition{}, invalidPolicy(policyInvalidJSON)
	}
	wrongCount := invalidPolicy("Invalid Policy: Invalid " + op + ": wrong number of arguments.")
	switch strings.ToLower(op) {
	case "eq", "starts-with":
		if len(list) != 3 {
			return policyCondition{}, wrongCount
		}
		return parseMatchCondition(strings.ToLower(op), list)
	case "content-length-range":
		if len(list) != 3 {
			return policyCondition{}, wrongCount
		}
		return parseLengthRange(list)
	}
	return policyCondition{}, invalidPolicy("Invalid Policy: Invalid Condition: unknown operation '" + op + "'.")
}

// parseSimpleCondition reads {"field": "value"}, an eq condition.
func parseSimpleCondition(raw json.RawMessage) (policyCondition, *s3err.Error) {
	var simple map[string]json.RawMessage
	if err := json.Unmarshal(raw, &simple); err != nil {
		return policyCondition{}, invalidPolicy(policyInvalidJSON)
	}
	if len(simple) != 1 {
		return policyCondition{}, invalidPolicy(policySimpleNotOne)
	}
	var name string
	var rawValue json.RawMessage
	for name, rawValue = range simple { // its one property
	}
	if bytes.Equal(bytes.TrimSpace(rawValue), []byte("null")) {
		return policyCondition{}, invalidPolicy(policyInvalidJSON)
	}
	value, ok := jsonString(rawValue)
	if !ok {
		return policyCondition{}, invalidPolicy(policySimpleNotString)
	}
	return policyCondition{op: opEq, field: strings.ToLower(name), name: "$" + name, value: value}, nil
}

// parseMatchCondition reads ["eq"|"starts-with", "$field", "value"]. A
// field without "$" is no error on S3: the condition fails, quoted as
// written.
func parseMatchCondition(op string, list []json.RawMessage) (policyCondition, *s3err.Error) {
	name, okName := jsonString(list[1])
	value, okValue := jsonString(list[2])
	if !okName || !okValue {
		return policyCondition{}, invalidPolicy(policyInvalidJSON)
	}
	if !strings.HasPrefix(name, "$") || len(name) < 2 {
		return policyCondition{op: opNeverHolds, text: quoteCondition(op, name, value)}, nil
	}
	c := policyCondition{op: opEq, field: strings.ToLower(name[1:]), name: name, value: value}
	if op == "starts-with" {
		c.op = opStartsWith
	}
	return c, nil
}

// parseLengthRange reads ["content-length-range", min, max]. S3 takes the
// bounds as JSON integers or as strings of digits; a fraction, a boolean or
// null is invalid JSON to it, and a string that is not a number makes a
// condition that fails.
func parseLengthRange(list []json.RawMessage) (policyCondition, *s3err.Error) {
	var bounds [2]int64
	var texts [2]string
	numeric := true
	for i, raw := range list[1:] {
		if s, ok := jsonString(raw); ok {
			texts[i] = s
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				numeric = false
				continue
			}
			bounds[i] = v
			continue
		}
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return policyCondition{}, invalidPolicy(policyInvalidJSON)
		}
		v, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return policyCondition{}, invalidPolicy(policyInvalidJSON)
		}
		bounds[i], texts[i] = v, n.String()
	}
	if !numeric {
		return policyCondition{op: opNeverHolds, text: quoteCondition("content-length-range", texts[0], texts[1])}, nil
	}
	if bounds[0] < 0 || bounds[1] < bounds[0] {
		return policyCondition{}, invalidPolicy("Invalid Policy: Invalid content-length-range: it takes a minimum and a maximum size, 0 <= minimum <= maximum.")
	}
	return policyCondition{op: opLengthRange, min: bounds[0], max: bounds[1]}, nil
}

// jsonString decodes a JSON string; anything else (a number, null) is not one.
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// CheckPolicy reads the form's policy field and checks it against the form
// as of now: unexpired, every condition met, every field named by one. The
// caller has verified the policy's signature first (sigv4's
// VerifyPostSignature); bucket and key are as for Policy.Check, whose
// content-length-range it returns.
func CheckPolicy(fields map[string]string, bucket, key string, now time.Time) (*LengthRange, error) {
	doc, perr := ParsePolicy(fields[FieldPolicy])
	if perr != nil {
		return nil, perr
	}
	if !now.Before(doc.Expiration()) {
		return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: Policy expired.")
	}
	length, perr := doc.Check(fields, bucket, key)
	if perr != nil {
		return nil, perr
	}
	return length, nil
}

// Expiration is when the policy stops allowing uploads.
func (d Policy) Expiration() time.Time { return d.expiration }

// Check evaluates every condition against the form's fields (by lower-case
// name) and refuses fields no condition names. bucket is the bucket the
// form was posted to; key the object key after ${filename} was replaced,
// fields["key"] the key as sent. It returns the content-length-range,
// which the caller checks against the file's size.
func (d Policy) Check(fields map[string]string, bucket, key string) (*LengthRange, *s3err.Error) {
	form := submission{fields: fields, bucket: bucket, key: key}
	covered := map[string]bool{}
	var length *LengthRange
	for _, c := range d.conditions {
		switch c.op {
		case opLengthRange:
			length = intersect(length, LengthRange{Min: c.min, Max: c.max})
			continue
		case opNeverHolds:
			return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: Policy Condition failed: %s", c.text)
		}
		covered[c.field] = true
		if !c.holds(form) {
			return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: Policy Condition failed: %s", c)
		}
	}
	if bucket, ok := form.fields[FieldBucket]; ok && bucket != form.bucket {
		return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: the bucket field names another bucket than the form was posted to.")
	}
	var extra []string
	for name := range form.fields {
		if !covered[name] && !exemptFromPolicy(name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: Extra input fields: %s", strings.Join(extra, ", "))
	}
	return length, nil
}

// submission is what the conditions are evaluated on.
type submission struct {
	fields      map[string]string
	bucket, key string
}

// exemptFromPolicy lists the fields S3 does not require a condition for:
// the signature, the policy itself, the file, and x-ignore-* fields.
func exemptFromPolicy(name string) bool {
	return name == FieldSignature || name == FieldPolicy || name == "file" || strings.HasPrefix(name, ignorePrefix)
}

func intersect(l *LengthRange, r LengthRange) *LengthRange {
	if l == nil {
		return &r
	}
	return &LengthRange{Min: max(l.Min, r.Min), Max: min(l.Max, r.Max)}
}

// holds evaluates an eq or starts-with condition. "bucket" is the bucket
// the form was posted to. A starts-with on the key must hold for the key as
// sent and for the key after ${filename} substitution: the filename must
// not carry the object out of the prefix the policy allows.
func (c policyCondition) holds(form submission) bool {
	value, present := form.fields[c.field]
	if c.field == FieldBucket {
		value, present = form.bucket, true
	}
	switch {
	case c.op == opEq:
		return present && value == c.value
	case !present:
		return c.value == ""
	case c.field == FieldKey:
		return strings.HasPrefix(value, c.value) && strings.HasPrefix(form.key, c.value)
	}
	return strings.HasPrefix(value, c.value)
}

// String renders the condition as S3 quotes it in errors: ["eq", "$key", "value"].
func (c policyCondition) String() string {
	op := "eq"
	if c.op == opStartsWith {
		op = "starts-with"
	}
	return quoteCondition(op, c.name, c.value)
}

// quoteCondition writes a condition as S3 quotes a failed one: a JSON list
// with a space after each comma (S3 reformats it so, whatever the policy's
// own spacing), simple conditions as "eq".
func quoteCondition(op, name, value string) string {
	quote := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return "[" + quote(op) + ", " + quote(name) + ", " + quote(value) + "]"
}

// decodePolicy base64-decodes the policy field.
func decodePolicy(policy string) ([]byte, *s3err.Error) {
	if policy == "" {
		return nil, invalidPolicy("Invalid Policy: Expecting '{' but found End-of-Input")
	}
	raw, err := base64.StdEncoding.DecodeString(policy)
	if err != nil {
		return nil, invalidPolicy("Invalid Policy: invalid Base64 encoding.")
	}
	return raw, nil
}

func invalidPolicy(message string) *s3err.Error {
	return s3err.Newf(s3err.InvalidPolicyDocument, "%s", message)
}
