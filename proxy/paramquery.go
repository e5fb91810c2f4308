package proxy

import (
	"net/url"
	"sort"
	"strings"
)

// checkedQuery is a request's query after every value passed its grammar
// (paramgrammar.go): the values s3cond checked, in the form it sends them.
type checkedQuery struct {
	values map[string]string
	// raw is the backend's query, encoded from values alone.
	raw string
}

// Get returns a checked value ("" when absent).
func (q checkedQuery) Get(name string) string { return q.values[name] }

// checkQuery applies the value allow-list to a query operation.Classify accepted: a
// parameter given twice, or a value outside its grammar, is refused with
// S3's answer. Presigned-URL authentication is the verifier's and is not
// sent on. The result's raw query is built from the checked values only,
// so the store reads what s3cond checked, not bytes it relayed.
func checkQuery(q url.Values, kp KeyPolicy) (checkedQuery, error) {
	if len(q) == 0 {
		return checkedQuery{}, nil
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names) // the same answer, and the same query, for the same request
	out := checkedQuery{values: make(map[string]string, len(q))}
	var raw strings.Builder
	for _, name := range names {
		values := q[name]
		if isAuthQueryParam(name) {
			continue
		}
		if len(values) != 1 {
			return checkedQuery{}, argumentError("The query parameter "+name+" is given more than once", name, values[0])
		}
		value := values[0]
		g := grammarOf(name)
		if !g.valid(value, kp) {
			return checkedQuery{}, g.refuse(name, value)
		}
		if g.canonical != nil {
			value = g.canonical(value)
		}
		if value == "" && g.dropped {
			continue
		}
		out.values[name] = value
		if raw.Len() > 0 {
			raw.WriteByte('&')
		}
		raw.WriteString(strictEscape(name))
		if value != "" {
			raw.WriteByte('=')
			raw.WriteString(strictEscape(value))
		}
	}
	out.raw = raw.String()
	return out, nil
}

// strictEscape percent-encodes every byte but RFC 3986's unreserved ones,
// as SigV4 canonicalises: '+' and '/' are encoded too, so a store that
// decodes '+' as a space or splits on '/' still reads the checked value.
func strictEscape(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !isUnreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

func isUnreserved(c byte) bool { return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' }
