package e2e

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// bucketPage is the part of a ListBuckets answer the paging tests read.
type bucketPage struct {
	Names []string `xml:"Buckets>Bucket>Name"`
	Token string   `xml:"ContinuationToken"`
}

// followBucketPages lists with max-buckets=1, following the tokens, and
// returns the names listed and every answer's raw body.
func followBucketPages(t *testing.T, e *Env, cred Credentials) (names []string, bodies string) {
	t.Helper()
	token := ""
	for range 50 {
		q := url.Values{"max-buckets": {"1"}}
		if token != "" {
			q.Set("continuation-token", token)
		}
		resp := Do(t, e.Endpoint, cred, RawRequest{Method: http.MethodGet, Path: "/", Query: q})
		if resp.Status != http.StatusOK {
			t.Fatalf("ListBuckets %v: %d %s", q, resp.Status, resp.Body)
		}
		bodies += string(resp.Body)
		var page bucketPage
		if err := xml.Unmarshal(resp.Body, &page); err != nil {
			t.Fatalf("ListBuckets answer: %v: %s", err, resp.Body)
		}
		names = append(names, page.Names...)
		if page.Token == "" {
			return names, bodies
		}
		token = page.Token
	}
	t.Fatalf("ListBuckets did not end in 50 pages: %v", names)
	return nil, ""
}

// TestListBucketsPagesLeakNoNames (issue 32, finding 7): ListBuckets'
// paging was versitygw's, whose continuation token is the next bucket's
// name, so a key granted only alpha learned every other bucket's name by
// following max-buckets=1 tokens, and under backend.buckets the store's
// names. s3cond now pages the key's own list with its own tokens.
func TestListBucketsPagesLeakNoNames(t *testing.T) {
	e := NewEnv(t, withAlphaOnlyKey(), WithConfig(func(c *Config) {
		c.Backend.Buckets = map[string]string{"client-photos": "store-photos"}
	}))
	e.RequireProxy(t)
	store := e.BackendClient()
	for _, b := range []string{"alpha", "other-1", "other-2", "other-3", "zeta", "store-photos"} {
		CreateBucket(t, store, b)
	}

	t.Run("granted only alpha", func(t *testing.T) {
		names, bodies := followBucketPages(t, e, alphaOnly)
		if !slices.Equal(names, []string{"alpha"}) {
			t.Errorf("listed %v, want only alpha", names)
		}
		for _, hidden := range []string{"other-", "zeta", "photos"} {
			if strings.Contains(bodies, hidden) {
				t.Errorf("the answers name %q:\n%s", hidden, bodies)
			}
		}
	})

	t.Run("every bucket under a mapping", func(t *testing.T) {
		names, bodies := followBucketPages(t, e, e.RW)
		want := []string{"alpha", "client-photos", "other-1", "other-2", "other-3", "zeta"}
		if !slices.Equal(names, want) {
			t.Errorf("listed %v one by one, want %v", names, want)
		}
		if strings.Contains(bodies, "store-photos") {
			t.Errorf("the answers name the store's bucket store-photos:\n%s", bodies)
		}
	})

	t.Run("a token s3cond did not make", func(t *testing.T) {
		resp := Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodGet, Path: "/",
			Query: url.Values{"max-buckets": {"1"}, "continuation-token": {"zeta"}}})
		resp.RequireError(t, http.StatusBadRequest, "InvalidArgument")
	})
}
