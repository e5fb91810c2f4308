package sigv4

import (
	"net/http"
	"sort"
	"strings"
)

// appendV2AmzHeaders writes SigV2's canonicalized x-amz-* headers: names in
// lower case, sorted, each "name:value" on its own line, the values of a
// repeated header joined by commas, each trimmed.
func appendV2AmzHeaders(b *strings.Builder, h http.Header) {
	names := make([]string, 0, 8)
	values := make(map[string][]string, 8)
	for name, vs := range h {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "x-amz-") {
			continue
		}
		if _, seen := values[lower]; !seen {
			names = append(names, lower)
		}
		values[lower] = append(values[lower], vs...)
	}
	sort.Strings(names)
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(':')
		for i, v := range values[name] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(v))
		}
		b.WriteByte('\n')
	}
}

// appendV2Subresources writes "?name[=value]&…" for the query parameters
// SigV2 signs (v2Subresources), sorted by name, values decoded as S3 signs
// them.
func appendV2Subresources(b *strings.Builder, rawQuery string) {
	type param struct{ name, value string }
	var params []param
	for piece := range strings.SplitSeq(rawQuery, "&") {
		rawName, rawValue, hasValue := strings.Cut(piece, "=")
		name := percentDecode(rawName, true)
		if !v2Subresources[name] {
			continue
		}
		p := param{name: name}
		if hasValue && rawValue != "" {
			p.value = percentDecode(rawValue, true)
		}
		params = append(params, p)
	}
	sort.SliceStable(params, func(i, j int) bool { return params[i].name < params[j].name })
	for i, p := range params {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p.name)
		if p.value != "" {
			b.WriteByte('=')
			b.WriteString(p.value)
		}
	}
}
