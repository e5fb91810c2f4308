package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A store names itself in its Server header whatever it answers the HEAD
// (a 404 for a missing bucket, a 403 for a key without rights): the
// identity keeps the header, cut at maxServerHeader, and the version of
// its first product.
func TestStoreIdentityReadsServerFromAnyAnswer(t *testing.T) {
	for _, c := range []struct {
		status          int
		server, version string
	}{
		{http.StatusOK, "SeaweedFS/4.53 (linux)", "4.53"},
		{http.StatusNotFound, "VERSITYGW", ""},
		{http.StatusForbidden, strings.Repeat("x", 500), ""},
	} {
		store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Server", c.server)
			w.WriteHeader(c.status)
		}))
		id, err := StoreIdentity(context.Background(), Options{Endpoint: store.URL, AccessKeyID: "k", SecretKey: "s", PathStyle: true, Bucket: "b"})
		store.Close()
		if err != nil {
			t.Errorf("%d: %v", c.status, err)
			continue
		}
		want := c.server[:min(len(c.server), maxServerHeader)]
		if id.Server != want || id.Version != c.version || id.Endpoint != store.URL || id.Bucket != "b" {
			t.Errorf("%d: %+v, want Server %q version %q", c.status, id, want, c.version)
		}
	}
}

// A store that does not answer has no identity: an error, so no verdict
// is reused or kept on its word.
func TestStoreIdentityOfAnUnreachableStoreIsAnError(t *testing.T) {
	store := httptest.NewServer(http.NotFoundHandler())
	endpoint := store.URL
	store.Close()
	if _, err := StoreIdentity(context.Background(), Options{Endpoint: endpoint, AccessKeyID: "k", SecretKey: "s", PathStyle: true, Bucket: "b"}); err == nil {
		t.Error("no error from a store that is not there")
	}
}
