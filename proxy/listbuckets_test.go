package proxy

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// TestListBucketsListsOnlyGrantedBuckets: ListBuckets was forwarded as it
// was, so a key granted one bucket listed the whole store. Now each key
// sees the buckets it may read, under the client's names (backend.buckets
// maps mapped-client to the store's mapped-store), with the store's Owner.
func TestListBucketsListsOnlyGrantedBuckets(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{bucketMap: map[string]string{"mapped-client": "mapped-store"}})
	ctx := context.Background()
	for _, b := range []string{"alpha", "beta", "granted-1", "mapped-client"} {
		if _, err := f.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatalf("create %s: %v", b, err)
		}
	}
	direct := newClient(f.backend.URL, testKeyID) // gofakes3 checks no signature
	storeList, err := direct.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if names := bucketNames(storeList); !slices.Contains(names, "mapped-store") {
		t.Fatalf("the store holds %v, want mapped-store among them", names)
	}

	for _, tc := range []struct {
		name   string
		key    string
		prefix string
		want   []string
	}{
		{"a key granted alpha and granted-*", grantedID, "", []string{"alpha", "granted-1"}},
		{"the same with a prefix", grantedID, "gr", []string{"granted-1"}},
		{"a prefix nothing granted matches", grantedID, "zz", nil},
		{"a key granted every bucket", testKeyID, "", []string{"alpha", "beta", "granted-1", "mapped-client", bucketName}},
		{"a read-only key granted every bucket", readOnlyID, "", []string{"alpha", "beta", "granted-1", "mapped-client", bucketName}},
		{"a prefix of a mapped client name", testKeyID, "mapped-c", []string{"mapped-client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &s3.ListBucketsInput{}
			if tc.prefix != "" {
				in.Prefix = aws.String(tc.prefix)
			}
			out, err := newClient(f.proxyURL, tc.key).ListBuckets(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := bucketNames(out); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
			if storeList.Owner != nil && (out.Owner == nil || aws.ToString(out.Owner.ID) != aws.ToString(storeList.Owner.ID)) {
				t.Fatalf("owner %+v, want the store's %+v", out.Owner, storeList.Owner)
			}
			if tc.prefix != "" && aws.ToString(out.Prefix) != tc.prefix {
				t.Fatalf("prefix %q, want %q", aws.ToString(out.Prefix), tc.prefix)
			}
		})
	}
}

func bucketNames(out *s3.ListBucketsOutput) []string {
	var names []string
	for _, b := range out.Buckets {
		names = append(names, aws.ToString(b.Name))
	}
	return names
}

func TestClientBucketNames(t *testing.T) {
	names := clientBucketNames(&Backend{Buckets: map[string]string{"a": "store-a", "b": "store-a", "store-b": "c"}})
	for backend, want := range map[string][]string{
		"store-a": {"a", "b"},  // two client names for one store bucket
		"plain":   {"plain"},   // not mapped: its own name
		"store-b": nil,         // its name addresses c, so it is unreachable as itself
		"c":       {"store-b"}, // listed under the name that reaches it
	} {
		got := names(backend)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("client names of %s = %v, want %v", backend, got, want)
		}
	}
}

func TestFilterBucketListDocument(t *testing.T) {
	backend := &Backend{}
	p := &Proxy{access: staticKeys{}, backend: backend}
	filter := func(in string) (string, error) {
		list, err := readBucketPage(strings.NewReader(in))
		if err != nil {
			return "", err
		}
		rec := httptest.NewRecorder()
		c := &call{r: httptest.NewRequest(http.MethodGet, "/", nil), w: rec, backend: backend, auth: &sigv4.Request{AccessKeyID: grantedID}}
		p.writeBucketList(c, list, listBucketsPaging{size: defaultBucketPage}, "")
		return rec.Body.String(), nil
	}

	// A store that omits the namespace and adds elements s3cond does not know.
	in := `<ListAllMyBucketsResult><Owner><ID>o1</ID><DisplayName>root</DisplayName></Owner>
		<Buckets><Bucket><Name>alpha</Name><CreationDate>2025-01-01T00:00:00.000Z</CreationDate><Extra>x</Extra></Bucket>
		<Bucket><Name>beta</Name><CreationDate>2025-01-02T00:00:00.000Z</CreationDate></Bucket></Buckets>
		<ContinuationToken>beta</ContinuationToken></ListAllMyBucketsResult>`
	out, err := filter(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`xmlns="` + s3xml.Namespace + `"`, "<ID>o1</ID>", "<DisplayName>root</DisplayName>",
		"<Name>alpha</Name>", "<CreationDate>2025-01-01T00:00:00.000Z</CreationDate>"} {
		if !strings.Contains(out, want) {
			t.Errorf("filtered list lacks %s: %s", want, out)
		}
	}
	// The store's token (versitygw's is a bucket name) is never relayed.
	if strings.Contains(out, "beta") || strings.Contains(out, "ContinuationToken") {
		t.Errorf("filtered list shows an ungranted bucket or the store's token: %s", out)
	}

	out, err = filter(`<ListAllMyBucketsResult><Buckets><Bucket><Name>beta</Name></Bucket></Buckets></ListAllMyBucketsResult>`)
	if err != nil || !strings.Contains(out, "<Buckets></Buckets>") {
		t.Errorf("nothing granted: %s, %v; want an empty Buckets element", out, err)
	}
	if _, err := filter("<html>not a bucket list"); !s3err.Is(err, s3err.BadGateway) {
		t.Errorf("garbage from the store: %v, want BadGateway", err)
	}
}

// The store's own paging is followed to its end: the fake stands for a
// store that pages ListBuckets with a token of its own even when no
// max-buckets is asked (S3 past 10,000 buckets; versitygw's token is the
// next bucket's name). The client sees one list, paged by s3cond.
func TestListBucketsFollowsTheStoresPages(t *testing.T) {
	pages := map[string]string{
		"":          `<ListAllMyBucketsResult><Buckets><Bucket><Name>alpha</Name></Bucket></Buckets><ContinuationToken>granted-1</ContinuationToken></ListAllMyBucketsResult>`,
		"granted-1": `<ListAllMyBucketsResult><Buckets><Bucket><Name>granted-1</Name></Bucket><Bucket><Name>zeta</Name></Bucket></Buckets></ListAllMyBucketsResult>`,
	}
	proxyURL, _ := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("max-buckets") {
			t.Errorf("the store was asked for the client's page: %s", r.URL.RawQuery)
		}
		_, _ = w.Write([]byte(pages[r.URL.Query().Get("continuation-token")]))
	})
	status, _, body := signedDo(t, http.MethodGet, proxyURL+"/", nil)
	for _, name := range []string{"alpha", "granted-1", "zeta"} {
		if !strings.Contains(body, "<Name>"+name+"</Name>") {
			t.Errorf("the list lacks %s: %d %s", name, status, body)
		}
	}
	if strings.Contains(body, "ContinuationToken") {
		t.Errorf("a whole list ends with a token: %s", body)
	}
	status, _, body = signedDo(t, http.MethodGet, proxyURL+"/?max-buckets=2", nil)
	var page s3xml.ListBucketsResult
	if err := xml.Unmarshal([]byte(body), &page); err != nil || status != http.StatusOK || len(page.Buckets.Bucket) != 2 || page.ContinuationToken == "" {
		t.Fatalf("max-buckets=2: %d %s", status, body)
	}
	status, _, body = signedDo(t, http.MethodGet, proxyURL+"/?max-buckets=2&continuation-token="+page.ContinuationToken, nil)
	if status != http.StatusOK || !strings.Contains(body, "<Name>zeta</Name>") || strings.Contains(body, "alpha") || strings.Contains(body, "ContinuationToken") {
		t.Fatalf("the second page: %d %s", status, body)
	}
}
