package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// logDeliveryURI is S3's log delivery group, a grantee s3cond lets
// through (configrefs.go): other principals are refused.
const logDeliveryURI = "http://acs.amazonaws.com/groups/s3/LogDelivery"

// A client that writes back the ACL it read names its own identity; the
// store must be told of its own principal instead, in the body and in
// x-amz-grant-* headers alike, or the owner's grant is lost.
func TestACLNamingTheClientIdentityReachesTheStoreAsTheBackendPrincipal(t *testing.T) {
	proxyURL, _, store := leakyProxy(t)
	me := clientIdentityOf(testKeyID)
	acl := `<AccessControlPolicy><Owner><ID>` + me + `</ID></Owner><AccessControlList><Grant>` +
		`<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` + me + `</ID></Grantee>` +
		`<Permission>FULL_CONTROL</Permission></Grant><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group">` +
		`<URI>` + logDeliveryURI + `</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`
	store.answer(http.StatusOK, "")
	for _, target := range []string{"/" + bucketName + "?acl", "/" + bucketName + "/k?acl"} {
		store.answer(http.StatusOK, "")
		status, _, body := signedDo(t, http.MethodPut, proxyURL+target, []byte(acl))
		if status != http.StatusOK {
			t.Fatalf("%s: status %d %s", target, status, body)
		}
		sent := store.requests[0].body
		if strings.Contains(sent, me) || strings.Count(sent, "<ID>"+backendKeyID+"</ID>") != 2 || !strings.Contains(sent, "<URI>"+logDeliveryURI+"</URI>") {
			t.Errorf("%s: the store was sent %s", target, sent)
		}
	}

	store.answer(http.StatusOK, "")
	req, _ := http.NewRequest(http.MethodPut, proxyURL+"/"+bucketName+"?acl", nil)
	req.Header.Set("X-Amz-Grant-Full-Control", `id="`+me+`", uri="`+logDeliveryURI+`"`)
	req.Header.Set("X-Amz-Grant-Read", `uri="`+logDeliveryURI+`"`)
	req.Header.Set("X-Amz-Grant-Write-Acp", me+", "+backendKeyID) // versitygw's bare account IDs
	signWithTestKey(t, req, nil)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := store.requests[0].header
	if v := got.Get("X-Amz-Grant-Full-Control"); v != `id="`+backendKeyID+`", uri="`+logDeliveryURI+`"` {
		t.Errorf("x-amz-grant-full-control reached the store as %q", v)
	}
	if v := got.Get("X-Amz-Grant-Write-Acp"); v != backendKeyID+", "+backendKeyID {
		t.Errorf("x-amz-grant-write-acp reached the store as %q", v)
	}
	if v := got.Get("X-Amz-Grant-Read"); v != `uri="`+logDeliveryURI+`"` {
		t.Errorf("x-amz-grant-read reached the store as %q", v)
	}
}

// A listing longer than s3cond reads whole streams, chunked, with every
// owner renamed and every other byte as the store sent it; an anonymous
// reader is shown the anonymous identity.
func TestLongListingStreamsWithOwnersRenamed(t *testing.T) {
	proxyURL, _, store := leakyProxy(t)
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>` + backendBucket + `</Name>`)
	entry := `<Contents><Key>` + backendKeyID + `</Key><Owner><ID>` + backendKeyID + `</ID><DisplayName>` + backendKeyID + `</DisplayName></Owner></Contents>`
	for doc.Len() < 4*maxBackendDocument {
		doc.WriteString(entry)
	}
	doc.WriteString(`</ListBucketResult>`)
	store.answer(http.StatusOK, doc.String())
	for _, signed := range []bool{true, false} {
		var status int
		var body string
		identity := clientIdentityOf(testKeyID)
		if signed {
			status, _, body = signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"?list-type=2&fetch-owner=true", nil)
		} else {
			status, body = unsigned(t, http.MethodGet, proxyURL+"/"+bucketName+"?list-type=2&fetch-owner=true")
			identity = clientIdentityOf("")
		}
		renamedEntry := `<Contents><Key>` + backendKeyID + `</Key><Owner><ID>` + identity + `</ID><DisplayName>` + identity + `</DisplayName></Owner></Contents>`
		want := strings.ReplaceAll(strings.Replace(doc.String(), backendBucket, bucketName, 1), entry, renamedEntry)
		if status != http.StatusOK || body != want {
			t.Errorf("signed %v: status %d, %d bytes (want %d)", signed, status, len(body), len(want))
		}
	}
}
