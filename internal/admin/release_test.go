package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// deadHolderTable holds b/k at generation 2, held by a process that died.
func deadHolderTable(t *testing.T) *dynamolease.MemTable {
	t.Helper()
	table := dynamolease.NewMemTable()
	if _, err := table.Create(context.Background(), dynamolease.Record{Path: "b/k", ETag: "*", Generation: 2,
		Timeout: 20 * time.Second, TTL: time.Now().Add(time.Hour), Owner: "killed:7#tok/1"}); err != nil {
		t.Fatal(err)
	}
	return table
}

func releaseQuery(path, etag, generation string) string {
	return LeaseReleasePath + "?" + url.Values{"path": {path}, "etag": {etag}, "generation": {generation}}.Encode()
}

func postRelease(h http.Handler, target, authorization string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, target, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decodeRelease(t *testing.T, rec *httptest.ResponseRecorder) LeaseReleaseAnswer {
	t.Helper()
	var answer LeaseReleaseAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", rec.Code, err, rec.Body)
	}
	return answer
}

// rowUnchanged fails unless b/k is still held at generation 2.
func rowUnchanged(t *testing.T, table dynamolease.Table, after string) {
	t.Helper()
	row, err := table.Get(context.Background(), "b/k", "*")
	if err != nil || row == nil || row.Generation != 2 || row.Released {
		t.Fatalf("after %s the row is %+v (%v), want it held at generation 2", after, row, err)
	}
}

func TestReleaseWithTheTokenFreesTheRow(t *testing.T) {
	table := deadHolderTable(t)
	h := ReleaseHandler(table, testToken, zerolog.Nop())

	rec := postRelease(h, releaseQuery("b/k", "*", "2"), "Bearer "+testToken)
	answer := decodeRelease(t, rec)
	if rec.Code != http.StatusOK || answer.Row == nil || answer.Row.Generation != 3 || !answer.Row.Released ||
		answer.Row.Owner != "killed:7#tok/1" {
		t.Fatalf("release: %d %+v", rec.Code, answer)
	}
	if row, _ := table.Get(context.Background(), "b/k", "*"); row == nil || row.Generation != 3 || !row.Released {
		t.Fatalf("row after the release: %+v", row)
	}
	// Asked again at the generation it now has: already released, nothing written.
	rec = postRelease(h, releaseQuery("b/k", "*", "3"), "bearer "+testToken)
	if answer := decodeRelease(t, rec); rec.Code != http.StatusOK || answer.Row == nil || answer.Row.Generation != 3 {
		t.Fatalf("release of a released row: %d %+v", rec.Code, answer)
	}
}

func TestReleaseWithoutTheTokenIsRefused(t *testing.T) {
	table := deadHolderTable(t)
	h := ReleaseHandler(table, testToken, zerolog.Nop())
	target := releaseQuery("b/k", "*", "2")
	for _, authorization := range []string{
		"",
		"Bearer",
		"Bearer ",
		"Bearer " + testToken[:len(testToken)-1],
		"Bearer " + testToken + "0",
		"Bearer " + strings.ToUpper(testToken),
		"Basic " + testToken,
		testToken,
	} {
		rec := postRelease(h, target, authorization)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: %d, want 401 with WWW-Authenticate", authorization, rec.Code)
		}
		if answer := decodeRelease(t, rec); answer.Row != nil {
			t.Errorf("Authorization %q: the answer shows a row: %+v", authorization, answer)
		}
	}
	// Two headers, one of them right: refused, never a guess at which counts.
	req := httptest.NewRequest(http.MethodPost, target, nil)
	req.Header.Add("Authorization", "Bearer wrong")
	req.Header.Add("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("two Authorization headers: %d, want 401", rec.Code)
	}
	// A handler built without a token refuses everyone, the empty token too.
	if rec := postRelease(ReleaseHandler(table, "", zerolog.Nop()), target, "Bearer "); rec.Code != http.StatusUnauthorized {
		t.Errorf("no token configured: %d, want 401", rec.Code)
	}
	rowUnchanged(t, table, "the refused releases")

	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodHead} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != http.MethodPost {
			t.Errorf("%s: %d, want 405 allowing POST", method, rec.Code)
		}
	}
	rowUnchanged(t, table, "the other methods")
}

func TestReleaseOfAMovedGenerationWritesNothing(t *testing.T) {
	table := deadHolderTable(t)
	h := ReleaseHandler(table, testToken, zerolog.Nop())
	// As when the holder renewed since the operator listed generation 1.
	rec := postRelease(h, releaseQuery("b/k", "*", "1"), "Bearer "+testToken)
	answer := decodeRelease(t, rec)
	if rec.Code != http.StatusConflict || answer.Row == nil || answer.Row.Generation != 2 || answer.Row.Released ||
		!strings.Contains(answer.Error, "not at the generation") {
		t.Fatalf("release at a moved generation: %d %+v, want 409 with the row as it is", rec.Code, answer)
	}
	rowUnchanged(t, table, "a release at a moved generation")
	rec = postRelease(h, releaseQuery("b/other", "*", "2"), "Bearer "+testToken)
	if answer := decodeRelease(t, rec); rec.Code != http.StatusNotFound || answer.Row != nil {
		t.Fatalf("release of no row: %d %+v, want 404", rec.Code, answer)
	}
}

func TestReleaseRefusesHostileQueries(t *testing.T) {
	table := deadHolderTable(t)
	h := ReleaseHandler(table, testToken, zerolog.Nop())
	long := strings.Repeat("k", maxReleasePath)
	for _, query := range []string{
		"",
		"path=b/k&etag=*",
		"path=b/k&generation=2",
		"etag=*&generation=2",
		"path=b/k&etag=*&generation=",
		"path=b/k&etag=*&generation=-1",
		"path=b/k&etag=*&generation=+2",
		"path=b/k&etag=*&generation=0x2",
		"path=b/k&etag=*&generation=2.0",
		"path=b/k&etag=*&generation=1_0",
		"path=b/k&etag=*&generation=18446744073709551616",
		"path=b/k&etag=*&generation=99999999999999999999999999999999",
		"path=b/k&etag=*&generation=2&generation=3",
		"path=b/k&path=b/j&etag=*&generation=2",
		"path=b/k&etag=*&generation=2&force=1",
		"path=b&etag=*&generation=2",
		"path=/k&etag=*&generation=2",
		"path=b/&etag=*&generation=2",
		"path=b/%ff%fe&etag=*&generation=2",
		"path=b/k&etag=%ff&generation=2",
		"path=b/" + long + "&etag=*&generation=2",
		"path=b/k&etag=" + strings.Repeat("e", maxReleaseETag+1) + "&generation=2",
		"path=b/k&etag=*&generation=2&%zz",
		"path=b/k;etag=*;generation=2",
		strings.Repeat("a", maxReleaseQuery+1),
	} {
		rec := postRelease(h, LeaseReleasePath+"?"+query, "Bearer "+testToken)
		if answer := decodeRelease(t, rec); rec.Code != http.StatusBadRequest || answer.Error == "" || answer.Row != nil {
			t.Errorf("query %.80q: %d %+v, want 400", query, rec.Code, answer)
		}
	}
	// A body, sized or chunked, is refused unread.
	for _, contentLength := range []int64{5, -1} {
		req := httptest.NewRequest(http.MethodPost, releaseQuery("b/k", "*", "2"), strings.NewReader("hello"))
		req.ContentLength = contentLength
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("a body of length %d: %d, want 413", contentLength, rec.Code)
		}
	}
	rowUnchanged(t, table, "the hostile queries")
}
