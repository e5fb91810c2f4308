package operation

import (
	"net/http/httptest"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func TestResolveTarget(t *testing.T) {
	cases := []struct {
		host, uri, domain string
		bucket, key, raw  string
		code              s3err.Code
	}{
		{"s3cond:9000", "/bkt/a/b%20c.txt", "", "bkt", "a/b c.txt", "a/b%20c.txt", ""},
		{"s3cond:9000", "/bkt", "", "bkt", "", "", ""},
		{"s3cond:9000", "/", "", "", "", "", ""},
		{"bkt.s3.local:9000", "/x%2By", "s3.local", "bkt", "x+y", "x%2By", ""},
		{"s3.local", "/bkt/k", "s3.local", "bkt", "k", "k", ""},
		{"s3cond", "/bkt/%ZZ", "", "", "", "", s3err.InvalidURI},
		{"s3cond", "/bkt/%FF", "", "", "", "", s3err.InvalidURI},
		{"s3cond", "/b/k", "", "", "", "", s3err.InvalidBucketName},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "http://"+c.host+"/", nil)
		r.RequestURI = c.uri
		r.Host = c.host
		got, err := ResolveTarget(r, c.domain)
		if c.code != "" {
			if !s3err.Is(err, c.code) {
				t.Errorf("%s%s: err %v, want %s", c.host, c.uri, err, c.code)
			}
			continue
		}
		if err != nil || got.Bucket != c.bucket || got.Key != c.key || got.RawKey != c.raw {
			t.Errorf("%s%s = %+v, %v; want %s %q %q", c.host, c.uri, got, err, c.bucket, c.key, c.raw)
		}
	}
}
