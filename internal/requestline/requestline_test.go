package requestline

import (
	"net/http"
	"net/url"
	"testing"
)

func TestRawPathIsThePathAsSent(t *testing.T) {
	for _, tc := range []struct {
		name       string
		requestURI string
		url        string
		want       string
	}{
		{"origin form keeps its escapes", "/b/a%2Fb%20c?acl", "", "/b/a%2Fb%20c"},
		{"origin form keeps an unneeded escape", "/b/%61", "", "/b/%61"},
		{"absolute form", "http://host:9000/b/k%2F?x=1", "", "/b/k%2F"},
		{"absolute form without a path", "http://host", "", "/"},
		{"in-process request: the URL's escaped path", "", "http://host/b/a%2Fb", "/b/a%2Fb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RequestURI: tc.requestURI, URL: &url.URL{}}
			if tc.url != "" {
				u, err := url.Parse(tc.url)
				if err != nil {
					t.Fatal(err)
				}
				r.URL = u
			}
			if got := RawPath(r); got != tc.want {
				t.Errorf("RawPath = %q, want %q", got, tc.want)
			}
		})
	}
}
