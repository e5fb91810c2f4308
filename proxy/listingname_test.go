package proxy

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// listingOf writes a ListObjectsV2 result for bucket as S3 and versitygw
// send it, with n keys that all start with the backend's bucket name, so a
// rewrite that touched more than the <Name> would show.
func listingOf(bucket string, n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` +
		`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>` + bucket + `</Name><Prefix></Prefix>`)
	for i := range n {
		fmt.Fprintf(&b, "<Contents><Key>backend-archive/%04d</Key><Size>1</Size></Contents>", i)
	}
	b.WriteString(`<KeyCount>` + strconv.Itoa(n) + `</KeyCount></ListBucketResult>`)
	return b.String()
}

func TestListingNamesTheClientsBucket(t *testing.T) {
	for _, keys := range []int{1, 500} { // inside and well past the searched head
		t.Run(strconv.Itoa(keys), func(t *testing.T) {
			backendDoc := listingOf("backend-archive", keys)
			proxyURL, _ := scriptedProxy(t, map[string]string{bucketName: "backend-archive"}, func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/backend-archive") {
					t.Errorf("backend asked for %s", r.URL.Path)
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(backendDoc)))
				_, _ = w.Write([]byte(backendDoc))
			})
			status, header, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"?list-type=2", nil)
			want := listingOf(bucketName, keys)
			if status != http.StatusOK || body != want {
				t.Fatalf("status %d, body\n%.300s\nwant\n%.300s", status, body, want)
			}
			if got := header.Get("Content-Length"); got != strconv.Itoa(len(want)) {
				t.Errorf("Content-Length %s, want %d", got, len(want))
			}
		})
	}
}

func TestUploadListingNamesTheClientsBucket(t *testing.T) {
	backendDoc := `<ListMultipartUploadsResult><Bucket>backend-archive</Bucket><Upload><Key>k</Key></Upload></ListMultipartUploadsResult>`
	proxyURL, _ := scriptedProxy(t, map[string]string{bucketName: "backend-archive"}, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(backendDoc)) // chunked: no Content-Length to adjust
	})
	status, _, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"?uploads", nil)
	want := strings.Replace(backendDoc, "backend-archive", bucketName, 1)
	if status != http.StatusOK || body != want {
		t.Fatalf("status %d body %s, want %s", status, body, want)
	}
}

func TestListingOfAnotherNamePassesUntouched(t *testing.T) {
	// A document whose first <Name> is not the mapped bucket is not one
	// s3cond understands; it passes as the store wrote it.
	backendDoc := listingOf("something-else", 3)
	proxyURL, _ := scriptedProxy(t, map[string]string{bucketName: "backend-archive"}, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(backendDoc))
	})
	status, _, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"?list-type=2", nil)
	if status != http.StatusOK || body != backendDoc {
		t.Fatalf("status %d body %s", status, body)
	}
}

// Issue 32, finding 9: the name was rewritten by operation, so a store
// that answers a sub-resource it does not implement with the bucket's
// listing (as a store that reads only the path does; the fake below stands
// for one) showed the client the backend's bucket name. The document's root
// decides now. A GetObject's body is the client's data and passes as
// stored, even when it is such a document.
func TestListingNamedByItsRootWhateverTheOperation(t *testing.T) {
	backendDoc := listingOf("backend-archive", 2)
	proxyURL, _ := scriptedProxy(t, map[string]string{bucketName: "backend-archive"}, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(backendDoc)) // a listing for whatever was asked
	})
	for _, query := range []string{"tagging", "versioning", "location", "object-lock", "list-type=2"} {
		status, _, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"?"+query, nil)
		if status != http.StatusOK || strings.Contains(body, "<Name>backend-archive</Name>") ||
			!strings.Contains(body, "<Name>"+bucketName+"</Name>") {
			t.Errorf("GET ?%s: %d %.200s; want the client's bucket name", query, status, body)
		}
	}
	status, _, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"/object.xml", nil)
	if status != http.StatusOK || body != backendDoc {
		t.Errorf("GetObject of an object holding a listing: %d %.200s; want its bytes as stored", status, body)
	}
}
