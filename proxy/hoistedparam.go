package proxy

import (
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// A presigning SDK moves x-amz-* headers into the query
// (x-amz-storage-class, x-amz-website-redirect-location, ...), and a store
// reads them there as the headers they stand for. So such a parameter is
// checked by its header's grammar, with the header's answer, and sent on
// as that grammar rebuilds it: one grammar per value, wherever it arrives.

// hoistedGrammars maps a canonical header key to its header grammar.
var hoistedGrammars = func() map[string]headerGrammar {
	m := make(map[string]headerGrammar, len(headerGrammars))
	for _, g := range headerGrammars {
		if strings.HasPrefix(g.key, "X-Amz-") {
			m[g.key] = g
		}
	}
	return m
}()

// hoistedHeaderGrammar is the grammar of the x-amz-* query parameter name:
// its header's row when the header has one, user metadata as the header's
// text, any other x-amz-* parameter as a bounded header-like value.
func hoistedHeaderGrammar(name string) paramGrammar {
	key := http.CanonicalHeaderKey(name)
	if strings.HasPrefix(key, "X-Amz-Meta-") {
		return fromHeaderGrammar(headerGrammar{name: strings.ToLower(name), key: key, parse: headerText})
	}
	if g, ok := hoistedGrammars[key]; ok {
		return fromHeaderGrammar(g)
	}
	return hoistedHeader
}

// fromHeaderGrammar is g as a query parameter's row. A value the header's
// grammar drops (x-amz-bypass-governance-retention) is left out of the
// query too.
func fromHeaderGrammar(g headerGrammar) paramGrammar {
	return paramGrammar{
		valid: func(v string, _ KeyPolicy) bool {
			_, err := g.parse(v)
			return err == nil
		},
		refuse: func(_, value string) *s3err.Error {
			_, err := g.parse(value)
			if err.Code != s3err.InvalidArgument {
				return err
			}
			return argumentError(err.Message, g.name, value)
		},
		canonical: func(v string) string {
			sent, _ := g.parse(v)
			return sent
		},
		dropped: true,
	}
}
