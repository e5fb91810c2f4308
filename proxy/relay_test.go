package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/sigv4"
)

// backendBucket is the store's name for the client's bucketName.
const backendBucket = "backend-archive"

// leakyStore stands for a store such as versitygw that names s3cond's
// backend key as owner, its own host in Location and error documents, and
// itself in Server and x-amz-id-2: it answers every request with the
// status, headers and body the test sets, and records what it was sent.
type leakyStore struct {
	mu       sync.Mutex
	status   int
	body     string
	requests []recordedRequest
}

type recordedRequest struct {
	header   http.Header
	body     string
	rawQuery string
}

func (s *leakyStore) answer(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body, s.requests = status, body, nil
}

func (s *leakyStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	status, doc := s.status, strings.ReplaceAll(s.body, "HOST", r.Host)
	s.requests = append(s.requests, recordedRequest{header: r.Header.Clone(), body: string(body), rawQuery: r.URL.RawQuery})
	s.mu.Unlock()
	h := w.Header()
	h.Set("Server", "VERSITYGW")
	h.Set("X-Amz-Id-2", "BACKENDHOST1")
	h.Set("X-Amz-Bucket-Arn", "arn:aws:s3:::"+backendBucket)
	h.Set("Location", "http://"+r.Host+"/"+backendBucket)
	h.Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, doc)
	}
}

// leakyProxy is the proxy in front of a leakyStore, with backend.buckets
// mapping bucketName to backendBucket and the store naming s3cond's
// principal by its key ID.
func leakyProxy(t testing.TB) (proxyURL, backendHost string, store *leakyStore) {
	t.Helper()
	return leakyProxyNaming(t, []string{backendKeyID})
}

// leakyProxyNaming is leakyProxy with the backend principal's names given.
func leakyProxyNaming(t testing.TB, identity []string) (proxyURL, backendHost string, store *leakyStore) {
	t.Helper()
	store = &leakyStore{status: http.StatusOK}
	server := httptest.NewServer(store)
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	backend := &Backend{
		Name: "default", Endpoint: u, Buckets: map[string]string{bucketName: backendBucket},
		Identity: identity,
		Client: &http.Client{Transport: sigv4.NewResigner(backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()),
			credentials.NewStaticCredentialsProvider(backendKeyID, "backend-secret", ""), "us-east-1"),
			CheckRedirect: noRedirects.CheckRedirect},
	}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend,
		Log: zerolog.Nop(), AnonymousRead: func(string) bool { return true }})
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return front.URL, u.Host, store
}

// opRequest is how the test calls one operation of the allow-list.
type opRequest struct {
	op     operation.Operation
	method string
	path   string
	query  string
	header http.Header
	body   []byte
}

// everyOperation is one request for each row of the allow-list, and for
// the operations refine tells apart (CopyObject, UploadPartCopy,
// ListObjectsV2), so that a row added to the table is tested too.
func everyOperation() []opRequest {
	var reqs []opRequest
	for _, rule := range operation.Rules() {
		op := rule.Op
		r := opRequest{op: op, method: rule.Method, path: map[operation.PathLevel]string{
			operation.ServiceLevel: "/", operation.BucketLevel: "/" + bucketName, operation.ObjectLevel: "/" + bucketName + "/k",
		}[rule.Level], query: rule.Subresource, header: http.Header{}}
		switch rule.Subresource {
		case "uploadId":
			r.query = "uploadId=u1"
			if op == operation.UploadPart {
				r.query += "&partNumber=1"
			}
		case "delete":
			r.body = []byte(`<Delete><Object><Key>k</Key></Object></Delete>`)
		}
		if op == operation.CompleteMultipartUpload {
			r.body = []byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`)
		}
		reqs = append(reqs, r)
		if op == operation.PutObject || op == operation.UploadPart {
			copyReq := r
			copyReq.op = map[operation.Operation]operation.Operation{operation.PutObject: operation.CopyObject, operation.UploadPart: operation.UploadPartCopy}[op]
			copyReq.header = http.Header{"X-Amz-Copy-Source": {bucketName + "/src"}}
			reqs = append(reqs, copyReq)
		}
		if op == operation.ListObjects {
			reqs = append(reqs, opRequest{op: operation.ListObjectsV2, method: r.method, path: r.path,
				query: "list-type=2&fetch-owner=true", header: http.Header{}})
		}
	}
	sort.Slice(reqs, func(i, j int) bool {
		return reqs[i].op+operation.Operation(reqs[i].path) < reqs[j].op+operation.Operation(reqs[j].path)
	})
	return reqs
}

// send makes the call as a client would: signed with the test key, a
// browser form for PostObject, a bare preflight for OPTIONS.
func (r opRequest) send(t *testing.T, proxyURL string) (int, http.Header, string) {
	t.Helper()
	target := proxyURL + r.path
	if r.query != "" {
		target += "?" + r.query
	}
	var resp *http.Response
	switch r.op {
	case operation.PostObject:
		resp = sendPostForm(t, proxyURL, bucketName, append(uploadPolicy().fields(t), field{"key", "uploads/k"}),
			"f.txt", strings.NewReader("data"), 4)
	case operation.PreflightRequest:
		req, _ := http.NewRequest(r.method, target, nil)
		req.Header = browserPreflight()
		var err error
		if resp, err = noRedirects.Do(req); err != nil {
			t.Fatal(err)
		}
	default:
		req, _ := http.NewRequest(r.method, target, bytes.NewReader(r.body))
		for name, values := range r.header {
			req.Header[name] = values
		}
		signWithTestKey(t, req, r.body)
		var err error
		if resp, err = noRedirects.Do(req); err != nil {
			t.Fatal(err)
		}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", r.op, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// owners is what a store writes for s3cond's principal.
const owners = `<Owner><ID>` + backendKeyID + `</ID><DisplayName>` + backendKeyID + `</DisplayName></Owner>` +
	`<Upload><Initiator><ID>` + backendKeyID + `</ID><DisplayName>` + backendKeyID + `</DisplayName></Initiator></Upload>` +
	`<AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">` +
	`<ID>` + backendKeyID + `</ID><DisplayName>` + backendKeyID + `</DisplayName></Grantee>` +
	`<Permission>FULL_CONTROL</Permission></Grant></AccessControlList>`

// successDocument is a store's successful answer to r: its bucket named
// where S3 names it, and the backend principal as every owner.
func successDocument(r opRequest) string {
	if r.op == operation.ListBuckets {
		return `<ListAllMyBucketsResult>` + owners + `<Buckets><Bucket><Name>` + backendBucket +
			`</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate></Bucket></Buckets></ListAllMyBucketsResult>`
	}
	name := map[operation.Operation]string{operation.ListObjects: "Name", operation.ListObjectsV2: "Name", operation.ListObjectVersions: "Name",
		operation.ListMultipartUploads: "Bucket", operation.ListParts: "Bucket", operation.CreateMultipartUpload: "Bucket", operation.CompleteMultipartUpload: "Bucket"}[r.op]
	doc := `<?xml version="1.0" encoding="UTF-8"?><Result xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`
	if name != "" {
		doc += "<" + name + ">" + backendBucket + "</" + name + ">"
	}
	if r.op == operation.CompleteMultipartUpload {
		doc += `<Location>http://HOST/` + backendBucket + `/k</Location>`
	}
	return doc + owners + `</Result>`
}

// errorDocuments are what versitygw and S3 write about a refused request:
// the key that signed it, s3cond's canonical request, the store's host.
var errorDocuments = map[int]string{
	http.StatusBadRequest: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidArgument</Code>` +
		`<Message>Invalid argument for ` + backendBucket + ` at HOST.</Message>` +
		`<AWSAccessKeyId>` + backendKeyID + `</AWSAccessKeyId><CanonicalRequest>GET /` + backendBucket + ` host:HOST</CanonicalRequest>` +
		`<BucketName>` + backendBucket + `</BucketName><Resource>/` + backendBucket + `/k</Resource>` +
		`<Endpoint>HOST</Endpoint><RequestId>BACKENDREQ1</RequestId><HostId>BACKENDHOST1</HostId></Error>`,
	http.StatusForbidden: versitygwSignatureMismatch("HOST"),
}

// No operation of the allow-list lets the store's key ID, host, bucket
// name or identity reach the client, in an error or a success, in a body
// or a header: they all share one rewriting path (relay.go).
func TestNoOperationRelaysTheStoresIdentity(t *testing.T) {
	proxyURL, backendHost, store := leakyProxy(t)
	leaks := []string{backendKeyID, backendHost, backendBucket, "VERSITYGW", "BACKENDHOST1", "BACKENDREQ1",
		"CanonicalRequest", "StringToSign"}
	check := func(t *testing.T, what string, status int, header http.Header, body string, bodyIsData bool) {
		t.Helper()
		for name, values := range header {
			for _, v := range values {
				for _, leak := range leaks {
					if strings.Contains(v, leak) {
						t.Errorf("%s: header %s: %q names %q", what, name, v, leak)
					}
				}
			}
		}
		if bodyIsData {
			return
		}
		for _, leak := range leaks {
			if strings.Contains(body, leak) {
				t.Errorf("%s: status %d, body names %q: %s", what, status, leak, body)
			}
		}
	}
	reqs := everyOperation()
	if len(reqs) < 60 {
		t.Fatalf("only %d operations: the allow-list was not read", len(reqs))
	}
	for _, r := range reqs {
		for status, doc := range errorDocuments {
			store.answer(status, doc)
			gotStatus, header, body := r.send(t, proxyURL)
			check(t, fmt.Sprintf("%s %s?%s answered %d", r.op, r.path, r.query, status), gotStatus, header, body, false)
		}
		store.answer(http.StatusOK, successDocument(r))
		gotStatus, header, body := r.send(t, proxyURL)
		check(t, fmt.Sprintf("%s %s?%s answered 200", r.op, r.path, r.query), gotStatus, header, body,
			dataAnswers[r.op] || r.op == operation.PostObject)
		if r.op != operation.PreflightRequest && r.method != http.MethodHead && gotStatus == http.StatusOK && !dataAnswers[r.op] &&
			strings.Contains(successDocument(r), "<Owner>") && !strings.Contains(body, "<ID>"+clientIdentityOf(testKeyID)+"</ID>") &&
			r.op != operation.CompleteMultipartUpload && r.op != operation.DeleteObjects {
			t.Errorf("%s: the client is not shown its own identity: %s", r.op, body)
		}
	}
}

// clientIdentityOf is the identity a client with keyID is shown.
func clientIdentityOf(keyID string) string {
	return clientIdentity(&call{auth: &sigv4.Request{AccessKeyID: keyID}})
}

// A successful document s3cond cannot read to rename its owners is not
// relayed: it might name the backend principal where s3cond did not see it.
func TestUnreadableSuccessDocumentIsBadGateway(t *testing.T) {
	proxyURL, _, store := leakyProxy(t)
	store.answer(http.StatusOK, `<AccessControlPolicy><Owner><ID>`+backendKeyID+`</ID></Own`)
	status, header, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"?acl", nil)
	if status != http.StatusBadGateway || strings.Contains(body, backendKeyID) || header.Get("Etag") != "" {
		t.Fatalf("status %d, body %s", status, body)
	}
}

// BenchmarkListing1000Keys is one ListObjectsV2 page of 1000 keys with
// owners through s3cond: "renamed" with the owners renamed as versitygw's
// listings are, "unrenamed" with no backend identity known (as before).
func BenchmarkListing1000Keys(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>` + backendBucket + `</Name>`)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&doc, `<Contents><Key>photos/2026/12/02/IMG_%06d.jpg</Key><LastModified>2026-12-02T07:00:00.000Z</LastModified>`+
			`<ETag>&#34;9b2cf535f27731c974343645a3985328&#34;</ETag><Size>1048576</Size><Owner><ID>%s</ID><DisplayName>%s</DisplayName></Owner>`+
			`<StorageClass>STANDARD</StorageClass></Contents>`, i, backendKeyID, backendKeyID)
	}
	doc.WriteString(`</ListBucketResult>`)
	for _, renamed := range []bool{true, false} {
		b.Run(map[bool]string{true: "renamed", false: "unrenamed"}[renamed], func(b *testing.B) {
			var identity []string
			if renamed {
				identity = []string{backendKeyID}
			}
			proxyURL, _, store := leakyProxyNaming(b, identity)
			store.answer(http.StatusOK, doc.String())
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			b.SetBytes(int64(doc.Len()))
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodGet, proxyURL+"/"+bucketName+"?list-type=2&fetch-owner=true", nil)
				signWithTestKey(b, req, nil)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n < int64(doc.Len())-1000 {
					b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
				}
			}
		})
	}
}
