package sigv4

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// policyDocument is a decoded POST policy: {"expiration": ..., "conditions": [...]}.
// The two top-level names are case-sensitive, as on S3; condition operators
// and field names are not.
type policyDocument struct {
	expiration time.Time
	conditions []policyCondition
}

type conditionOp uint8

const (
	opEq conditionOp = iota
	opStartsWith
	opLengthRange
)

// policyCondition is one entry of the conditions list.
type policyCondition struct {
	op conditionOp
	// field is the form field it constrains, lower case, without "$";
	// name is the same as the policy spelled it, for error messages.
	field, name string
	value       string
	min, max    int64 // opLengthRange
}

func parsePolicy(policy string) (policyDocument, *s3err.Error) {
	raw, perr := decodePolicy(policy)
	if perr != nil {
		return policyDocument{}, perr
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return policyDocument{}, invalidPolicy("Invalid Policy: Invalid JSON.")
	}
	var doc policyDocument
	var expiration string
	if err := json.Unmarshal(top["expiration"], &expiration); err != nil || expiration == "" {
		return policyDocument{}, invalidPolicy("Invalid Policy: Policy missing expiration.")
	}
	t, err := time.Parse(time.RFC3339, expiration)
	if err != nil {
		return policyDocument{}, invalidPolicy("Invalid Policy: Invalid 'expiration' value: '" + expiration + "'")
	}
	doc.expiration = t
	var conditions []json.RawMessage
	if err := json.Unmarshal(top["conditions"], &conditions); err != nil || top["conditions"] == nil {
		return policyDocument{}, invalidPolicy("Invalid Policy: Policy missing conditions.")
	}
	for _, rawCond := range conditions {
		c, perr := parseCondition(rawCond)
		if perr != nil {
			return policyDocument{}, perr
		}
		doc.conditions = append(doc.conditions, c)
	}
	return doc, nil
}

// parseCondition reads {"field": "value"}, ["eq"|"starts-with", "$field",
// "value"] or ["content-length-range", min, max].
func parseCondition(raw json.RawMessage) (policyCondition, *s3err.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var simple map[string]string
		if err := json.Unmarshal(raw, &simple); err != nil {
			return policyCondition{}, invalidPolicy("Invalid Policy: Invalid Simple-Condition: value must be a string.")
		}
		if len(simple) != 1 {
			return policyCondition{}, invalidPolicy("Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
		}
		for name, value := range simple {
			return policyCondition{op: opEq, field: strings.ToLower(name), name: "$" + name, value: value}, nil
		}
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return policyCondition{}, invalidPolicy("Invalid Policy: Invalid condition: " + string(raw))
	}
	var op string
	if err := json.Unmarshal(list[0], &op); err != nil {
		return policyCondition{}, invalidPolicy("Invalid Policy: Invalid condition: " + string(raw))
	}
	switch strings.ToLower(op) {
	case "eq", "starts-with":
		return parseMatchCondition(strings.ToLower(op), list, raw)
	case "content-length-range":
		return parseLengthRange(list)
	}
	return policyCondition{}, invalidPolicy("Invalid Policy: Invalid condition operator '" + op + "'.")
}

func parseMatchCondition(op string, list []json.RawMessage, raw json.RawMessage) (policyCondition, *s3err.Error) {
	var name, value string
	if len(list) != 3 || json.Unmarshal(list[1], &name) != nil || json.Unmarshal(list[2], &value) != nil ||
		!strings.HasPrefix(name, "$") || len(name) < 2 {
		return policyCondition{}, invalidPolicy("Invalid Policy: Invalid '" + op + "' condition: " + string(raw))
	}
	c := policyCondition{op: opEq, field: strings.ToLower(name[1:]), name: name, value: value}
	if op == "starts-with" {
		c.op = opStartsWith
	}
	return c, nil
}

func parseLengthRange(list []json.RawMessage) (policyCondition, *s3err.Error) {
	bad := invalidPolicy("Invalid Policy: Invalid content-length-range: it takes a minimum and a maximum size, 0 <= minimum <= maximum.")
	if len(list) != 3 {
		return policyCondition{}, bad
	}
	var bounds [2]int64
	for i, raw := range list[1:] {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return policyCondition{}, bad
		}
		v, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return policyCondition{}, bad
		}
		bounds[i] = v
	}
	if bounds[0] < 0 || bounds[1] < bounds[0] {
		return policyCondition{}, bad
	}
	return policyCondition{op: opLengthRange, min: bounds[0], max: bounds[1]}, nil
}

// check evaluates every condition against the form and refuses fields no
// condition names. It returns the content-length-range, which the caller
// checks against the file's size.
func (d policyDocument) check(form PostForm) (*LengthRange, *s3err.Error) {
	covered := map[string]bool{}
	var length *LengthRange
	for _, c := range d.conditions {
		if c.op == opLengthRange {
			length = intersect(length, LengthRange{Min: c.min, Max: c.max})
			continue
		}
		covered[c.field] = true
		if !c.holds(form) {
			return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: Policy Condition failed: %s", c)
		}
	}
	if bucket, ok := form.Fields[postFieldBucket]; ok && bucket != form.Bucket {
		return nil, s3err.Newf(s3err.AccessDenied, "Invalid according to Policy: the bucket field names another bucket than the form was posted to.")
	}
	var extra []string
	for name := range form.Fields {
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

// exemptFromPolicy lists the fields S3 does not require a condition for:
// the signature, the policy itself, the file, and x-ignore-* fields.
func exemptFromPolicy(name string) bool {
	return name == postFieldSignature || name == postFieldPolicy || name == "file" || strings.HasPrefix(name, postIgnorePrefix)
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
func (c policyCondition) holds(form PostForm) bool {
	value, present := form.Fields[c.field]
	if c.field == postFieldBucket {
		value, present = form.Bucket, true
	}
	switch {
	case c.op == opEq:
		return present && value == c.value
	case !present:
		return c.value == ""
	case c.field == postFieldKey:
		return strings.HasPrefix(value, c.value) && strings.HasPrefix(form.Key, c.value)
	}
	return strings.HasPrefix(value, c.value)
}

// String renders the condition as S3 quotes it in errors: ["eq", "$key", "value"].
func (c policyCondition) String() string {
	quote := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	op := "eq"
	if c.op == opStartsWith {
		op = "starts-with"
	}
	return "[" + quote(op) + ", " + quote(c.name) + ", " + quote(c.value) + "]"
}
