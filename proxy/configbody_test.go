package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/sigv4"
)

// configProxy is the proxy in front of a leakyStore (a stand-in for any S3
// store that keeps the configurations it is given) for grantedID, which
// may write alpha and granted-*: granted-public is in anonymous.buckets,
// granted-mapped is the store's store-mapped, and granted-elsewhere is on
// another backend.
func configProxy(t *testing.T) (string, *leakyStore) {
	t.Helper()
	store := &leakyStore{status: http.StatusOK}
	server := httptest.NewServer(store)
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	newBackend := func(name string) *Backend {
		return &Backend{Name: name, Endpoint: u, Buckets: map[string]string{"granted-mapped": "store-mapped"}, Identity: []string{backendKeyID},
			Client: &http.Client{Transport: sigv4.NewResigner(backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()),
				credentials.NewStaticCredentialsProvider(backendKeyID, "backend-secret", ""), "us-east-1")}}
	}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: newBackend("default"),
		BucketBackends: map[string]*Backend{"granted-elsewhere": newBackend("other")},
		Log:            zerolog.Nop(), AnonymousRead: func(b string) bool { return b == "granted-public" }})
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return front.URL, store
}

// grantedDo sends a request signed with grantedID.
func grantedDo(t *testing.T, method, target string, header http.Header, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, target, bytes.NewReader(body))
	for name, values := range header {
		req.Header[name] = values
	}
	sum := sha256.Sum256(body)
	testkit.Sign(t, req, aws.Credentials{AccessKeyID: grantedID, SecretAccessKey: testSecret}, hex.EncodeToString(sum[:]))
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}

const (
	replicationDoc = `<ReplicationConfiguration><Role>arn:aws:iam::1:role/r</Role><Rule><Status>Enabled</Status><Destination>DEST</Destination></Rule></ReplicationConfiguration>`
	aclDoc         = `<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="GRANTEE_TYPE">GRANTEE</Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`
	blockDoc       = `<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>true</IgnorePublicAcls><BlockPublicPolicy>true</BlockPublicPolicy>FLAG</PublicAccessBlockConfiguration>`
)

func replication(destination string) string {
	return strings.Replace(replicationDoc, "DEST", destination, 1)
}

// website is a website configuration of size bytes (size >= 100).
func website(size int64) string {
	const open, closing = `<WebsiteConfiguration><IndexDocument><Suffix>index.html</Suffix></IndexDocument>`, `</WebsiteConfiguration>`
	return open + strings.Repeat(" ", int(size)-len(open)-len(closing)) + closing
}

func acl(kind, grantee string) string {
	return strings.NewReplacer("GRANTEE_TYPE", kind, "GRANTEE", grantee).Replace(aclDoc)
}

func policy(statement string) string {
	return `{"Version":"2012-10-17","Statement":[` + statement + `]}`
}

type configCase struct {
	name, method, path string
	header             http.Header
	body               string
	status             int
	code               string
}

// Each body is checked against grantedID's grant before the store sees it:
// refused, nothing is sent; accepted, the store gets the client's bytes.
func TestConfigurationBodiesAreCheckedAgainstTheGrant(t *testing.T) {
	me := clientIdentityOf(grantedID)
	cases := []configCase{
		{"replication to a granted bucket", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::granted-b</Bucket>`), 200, ""},
		{"replication to another bucket", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::mb2</Bucket>`), 403, "AccessDenied"},
		{"replication to a plain name", "PUT", "/alpha?replication", nil, replication(`<Bucket>mb2</Bucket>`), 403, "AccessDenied"},
		{"replication with a second destination", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::granted-b</Bucket><Bucket>arn:aws:s3:::mb2</Bucket>`), 403, "AccessDenied"},
		{"replication in lower case", "PUT", "/alpha?replication", nil, replication(`<bucket>arn:aws:s3:::mb2</bucket>`), 403, "AccessDenied"},
		{"replication to a pattern", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::granted-*</Bucket>`), 403, "AccessDenied"},
		{"replication to an access point", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:us-east-1:1:accesspoint/a</Bucket>`), 403, "AccessDenied"},
		{"replication to another account", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::granted-b</Bucket><Account>1</Account>`), 403, "AccessDenied"},
		{"replication to a mapped bucket", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::granted-mapped</Bucket>`), 501, "NotImplemented"},
		{"replication to another backend", "PUT", "/alpha?replication", nil, replication(`<Bucket>arn:aws:s3:::granted-elsewhere</Bucket>`), 501, "NotImplemented"},
		{"replication with an entity", "PUT", "/alpha?replication", nil, `<!DOCTYPE r [<!ENTITY d "mb2">]>` + replication(`<Bucket>&d;</Bucket>`), 400, "MalformedXML"},
		{"inventory to another bucket", "PUT", "/alpha?inventory&id=i", nil, `<InventoryConfiguration><Destination><S3BucketDestination><Bucket>arn:aws:s3:::mb2</Bucket></S3BucketDestination></Destination></InventoryConfiguration>`, 403, "AccessDenied"},
		{"inventory to itself", "PUT", "/alpha?inventory&id=i", nil, `<InventoryConfiguration><Destination><S3BucketDestination><Bucket>arn:aws:s3:::alpha</Bucket></S3BucketDestination></Destination></InventoryConfiguration>`, 200, ""},
		{"analytics export elsewhere", "PUT", "/alpha?analytics&id=i", nil, `<AnalyticsConfiguration><StorageClassAnalysis><DataExport><Destination><S3BucketDestination><Bucket>arn:aws:s3:::mb2</Bucket></S3BucketDestination></Destination></DataExport></StorageClassAnalysis></AnalyticsConfiguration>`, 403, "AccessDenied"},
		{"metrics by access point", "PUT", "/alpha?metrics&id=i", nil, `<MetricsConfiguration><Filter><AccessPointArn>arn:aws:s3:us-east-1:1:accesspoint/x</AccessPointArn></Filter></MetricsConfiguration>`, 403, "AccessDenied"},
		{"notification to a queue", "PUT", "/alpha?notification", nil, `<NotificationConfiguration><QueueConfiguration><Queue>arn:aws:sqs:us-east-1:1:q</Queue></QueueConfiguration></NotificationConfiguration>`, 403, "AccessDenied"},
		{"notification to a function", "PUT", "/alpha?notification", nil, `<NotificationConfiguration><CloudFunctionConfiguration><CloudFunction>arn:aws:lambda:us-east-1:1:function:f</CloudFunction></CloudFunctionConfiguration></NotificationConfiguration>`, 403, "AccessDenied"},
		{"notification to the event bus", "PUT", "/alpha?notification", nil, `<NotificationConfiguration><EventBridgeConfiguration/></NotificationConfiguration>`, 403, "AccessDenied"},
		{"no notification", "PUT", "/alpha?notification", nil, `<NotificationConfiguration/>`, 200, ""},
		{"logging elsewhere", "PUT", "/alpha?logging", nil, `<BucketLoggingStatus><LoggingEnabled><TargetBucket>mb2</TargetBucket></LoggingEnabled></BucketLoggingStatus>`, 403, "AccessDenied"},
		{"logging to a granted bucket", "PUT", "/alpha?logging", nil, `<BucketLoggingStatus><LoggingEnabled><TargetBucket>granted-logs</TargetBucket><TargetPrefix>a/</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`, 200, ""},
		{"logs made public", "PUT", "/granted-public?logging", nil, `<BucketLoggingStatus><LoggingEnabled><TargetBucket>granted-logs</TargetBucket><TargetGrants><Grant><Grantee><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee></Grant></TargetGrants></LoggingEnabled></BucketLoggingStatus>`, 403, "AccessDenied"},
		{"restore into another bucket", "POST", "/alpha/k?restore", nil, `<RestoreRequest><OutputLocation><S3><BucketName>mb2</BucketName></S3></OutputLocation></RestoreRequest>`, 403, "AccessDenied"},
		{"ACL granting everyone", "PUT", "/alpha?acl", nil, acl("Group", `<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI>`), 403, "AccessDenied"},
		{"ACL granting authenticated users", "PUT", "/alpha/k?acl", nil, acl("Group", `<URI>http://acs.amazonaws.com/groups/global/AuthenticatedUsers</URI>`), 403, "AccessDenied"},
		{"ACL granting everyone an anonymous bucket", "PUT", "/granted-public?acl", nil, acl("Group", `<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI>`), 200, ""},
		{"ACL granting another principal", "PUT", "/alpha?acl", nil, acl("CanonicalUser", `<ID>someone-else</ID>`), 403, "AccessDenied"},
		{"ACL granting by email", "PUT", "/alpha?acl", nil, acl("AmazonCustomerByEmail", `<EmailAddress>a@example.com</EmailAddress>`), 403, "AccessDenied"},
		{"ACL granting the client itself", "PUT", "/alpha?acl", nil, acl("CanonicalUser", `<ID>`+me+`</ID>`), 200, ""},
		{"canned public-read", "PUT", "/alpha/k", http.Header{"X-Amz-Acl": {"public-read"}}, "data", 403, "AccessDenied"},
		{"canned public-read-write bucket", "PUT", "/granted-new", http.Header{"X-Amz-Acl": {"public-read-write"}}, "", 403, "AccessDenied"},
		{"canned authenticated-read ACL", "PUT", "/alpha?acl", http.Header{"X-Amz-Acl": {"authenticated-read"}}, "", 403, "AccessDenied"},
		{"canned aws-exec-read", "PUT", "/alpha/k", http.Header{"X-Amz-Acl": {"aws-exec-read"}}, "data", 403, "AccessDenied"},
		{"canned public-read on an anonymous bucket", "PUT", "/granted-public/k", http.Header{"X-Amz-Acl": {"public-read"}}, "data", 200, ""},
		{"canned private", "PUT", "/alpha/k", http.Header{"X-Amz-Acl": {"private"}}, "data", 200, ""},
		{"grant header to everyone", "PUT", "/alpha/k", http.Header{"X-Amz-Grant-Read": {`uri="http://acs.amazonaws.com/groups/global/AllUsers"`}}, "data", 403, "AccessDenied"},
		{"grant header by email", "PUT", "/alpha?acl", http.Header{"X-Amz-Grant-Full-Control": {`id="` + me + `", emailAddress="a@example.com"`}}, "", 403, "AccessDenied"},
		{"grant header to another ID", "POST", "/alpha/k?uploads", http.Header{"X-Amz-Grant-Write-Acp": {`id="someone-else"`}}, "", 403, "AccessDenied"},
		{"grant header to the client", "PUT", "/alpha?acl", http.Header{"X-Amz-Grant-Full-Control": {`id="` + me + `"`}}, "", 200, ""},
		{"public access block on", "PUT", "/alpha?publicAccessBlock", nil, strings.Replace(blockDoc, "FLAG", `<RestrictPublicBuckets>true</RestrictPublicBuckets>`, 1), 200, ""},
		{"public access block with a switch off", "PUT", "/alpha?publicAccessBlock", nil, strings.Replace(blockDoc, "FLAG", `<RestrictPublicBuckets>false</RestrictPublicBuckets>`, 1), 403, "AccessDenied"},
		{"public access block with a switch missing", "PUT", "/alpha?publicAccessBlock", nil, strings.Replace(blockDoc, "FLAG", ``, 1), 403, "AccessDenied"},
		{"public access block with a switch twice", "PUT", "/alpha?publicAccessBlock", nil, strings.Replace(blockDoc, "FLAG", `<RestrictPublicBuckets>true</RestrictPublicBuckets><RestrictPublicBuckets>false</RestrictPublicBuckets>`, 1), 403, "AccessDenied"},
		{"public access block off, anonymous bucket", "PUT", "/granted-public?publicAccessBlock", nil, strings.Replace(blockDoc, "FLAG", ``, 1), 200, ""},
		{"public access block removed", "DELETE", "/alpha?publicAccessBlock", nil, "", 403, "AccessDenied"},
		{"public access block removed, anonymous bucket", "DELETE", "/granted-public?publicAccessBlock", nil, "", 200, ""},
		{"CORS of another root", "PUT", "/alpha?cors", nil, `<LifecycleConfiguration/>`, 400, "MalformedXML"},
		{"CORS", "PUT", "/alpha?cors", nil, `<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>`, 200, ""},
		{"lifecycle oversize", "PUT", "/alpha?lifecycle", nil, `<LifecycleConfiguration>` + strings.Repeat(" ", int(largeConfigBody)) + `</LifecycleConfiguration>`, 400, "MalformedXML"},
		// S3 bounds a website configuration at 128 KiB itself and says so
		// (MaxMessageLengthExceeded, naming the bound); below it, it accepts.
		{"website within S3's bound", "PUT", "/alpha?website", nil, website(100 << 10), 200, ""},
		{"website oversize", "PUT", "/alpha?website", nil, website(websiteConfigBody + 1), 400, "MaxMessageLengthExceeded"},
	}
	cases = append(cases, policyCases()...)
	runConfigCases(t, cases)
}

// runConfigCases sends each case through configProxy and checks both the
// answer and what the store was sent.
func runConfigCases(t *testing.T, cases []configCase) {
	t.Helper()
	proxyURL, store := configProxy(t)
	for _, tc := range cases {
		store.answer(http.StatusOK, "")
		status, answer := grantedDo(t, tc.method, proxyURL+tc.path, tc.header, []byte(tc.body))
		if status != tc.status || tc.code != "" && !strings.Contains(answer, "<Code>"+tc.code+"</Code>") {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, answer, tc.status, tc.code)
			continue
		}
		switch {
		case tc.status == http.StatusBadRequest && sentBody(store):
			// Only a bodiless lookup may go out (bucketfirst.go: S3's order).
			t.Errorf("%s: refused, yet the store was sent %+v", tc.name, store.requests)
		case tc.status != http.StatusOK && tc.status != http.StatusBadRequest && len(store.requests) != 0:
			t.Errorf("%s: refused, yet the store was sent %d requests", tc.name, len(store.requests))
		case tc.status == http.StatusOK && (len(store.requests) != 1 || !strings.HasPrefix(tc.path, "/alpha?acl") && store.requests[0].body != tc.body):
			t.Errorf("%s: the store got %+v", tc.name, store.requests)
		}
	}
}

func sentBody(store *leakyStore) bool {
	for _, r := range store.requests {
		if r.body != "" {
			return true
		}
	}
	return false
}

func policyCases() []configCase {
	c := func(name, path, body string, status int, code string) configCase {
		return configCase{name, "PUT", path, nil, body, status, code}
	}
	public := `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::BUCKET/*"}`
	on := func(bucket string) string { return policy(strings.Replace(public, "BUCKET", bucket, 1)) }
	return []configCase{
		c("policy with Principal *", "/alpha?policy", on("alpha"), 403, "AccessDenied"),
		c("policy with Principal * on an anonymous bucket", "/granted-public?policy", on("granted-public"), 200, ""),
		c("policy with Principal * naming another bucket", "/granted-public?policy", on("mb2"), 403, "AccessDenied"),
		c("policy with Principal * naming a granted, not anonymous bucket", "/granted-public?policy", on("alpha"), 403, "AccessDenied"),
		c("policy with Principal * naming a mapped bucket", "/granted-public?policy", on("granted-mapped"), 501, "NotImplemented"),
		c("public policy allowing writes", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::granted-public/*"}`), 403, "AccessDenied"),
		c("policy allowing another principal", "/alpha?policy", policy(`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::1:root"},"Action":"s3:*","Resource":"arn:aws:s3:::alpha/*"}`), 403, "AccessDenied"),
		c("policy allowing NotPrincipal", "/granted-public?policy", policy(`{"Effect":"Allow","NotPrincipal":{"AWS":"x"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::granted-public/*"}`), 403, "AccessDenied"),
		c("policy allowing NotAction", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":"*","NotAction":["s3:PutObject"],"Resource":"arn:aws:s3:::granted-public/*"}`), 403, "AccessDenied"),
		c("policy allowing NotResource", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","NotResource":"arn:aws:s3:::x"}`), 403, "AccessDenied"),
		c("policy allowing every bucket", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*"}`), 403, "AccessDenied"),
		c("policy with the Principal twice", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::1:root"},"principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::granted-public/*"}`), 400, "MalformedPolicy"),
		c("policy allowing without a principal", "/alpha?policy", policy(`{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::alpha/*"}`), 403, "AccessDenied"),
		c("policy that only denies", "/alpha?policy", policy(`{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::alpha/*"}`), 200, ""),
		c("policy denying on another bucket", "/alpha?policy", policy(`{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::mb2/*"}`), 403, "AccessDenied"),
		c("policy with Reſource beside Resource", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::mb2/*","Reſource":"arn:aws:s3:::granted-public/*"}`), 400, "MalformedPolicy"),
		c("public policy allowing without an action", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::granted-public/*"}`), 400, "MalformedPolicy"),
		c("public policy with Action and NotAction", "/granted-public?policy", policy(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","NotAction":"s3:GetObject","Resource":"arn:aws:s3:::granted-public/*"}`), 400, "MalformedPolicy"),
		c("policy that is no JSON", "/alpha?policy", `<Policy/>`, 400, "MalformedPolicy"),
	}
}

// Every write of the allow-list either has its body read here or is one
// whose body is an object or read elsewhere: none is forwarded unread.
func TestEveryWriteBodyIsRead(t *testing.T) {
	for _, rule := range operation.Rules() {
		if rule.Method != http.MethodPut && rule.Method != http.MethodPost {
			continue
		}
		if _, read := configurationBodies[rule.Op]; !read && !streamedBodies[rule.Op] {
			t.Errorf("%s (%s ?%s) forwards a body s3cond does not read", rule.Op, rule.Method, rule.Subresource)
		}
	}
	known := map[operation.Operation]bool{}
	for _, rule := range operation.Rules() {
		known[rule.Op] = true
	}
	for op := range configurationBodies {
		if !known[op] {
			t.Errorf("%s is in configurationBodies but is no operation of the allow-list", op)
		}
	}
	c := &call{r: httptest.NewRequest(http.MethodPut, "/alpha?unknown", nil), op: "PutBucketUnknownConfiguration"}
	p := &Proxy{anonymousRead: func(string) bool { return false }}
	if err := p.checkConfiguration(c); err == nil || !strings.Contains(err.Error(), "NotImplemented") {
		t.Errorf("a write whose body s3cond does not read: %v, want NotImplemented", err)
	}
}

// A POST form's canned ACL is the x-amz-acl of the PutObject it becomes.
func TestPostFormPublicACLNeedsAnonymousBucket(t *testing.T) {
	f := newFixture(t, false)
	fields := append(uploadPolicy(map[string]string{"acl": "public-read"}).fields(t), field{"key", "uploads/k"}, field{"acl", "public-read"})
	resp := sendPostForm(t, f.proxyURL, bucketName, fields, "f.txt", strings.NewReader("data"), 4)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "anonymous.buckets") {
		t.Errorf("POST form with acl=public-read: %d %s", resp.StatusCode, body)
	}
}
