package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// mbOnly is a read-write key granted the bucket mb1 and nothing else.
var mbOnly = Credentials{"AKIAE2EMBONLY", "e2e-mb-only-secret-0123456789"}

const (
	replicationTo = `<ReplicationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Role>arn:aws:iam::123456789012:role/replication</Role>` +
		`<Rule><ID>r1</ID><Status>Enabled</Status><Priority>1</Priority><DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication>` +
		`<Filter><Prefix></Prefix></Filter><Destination><Bucket>arn:aws:s3:::DEST</Bucket></Destination></Rule></ReplicationConfiguration>`
	inventoryTo = `<InventoryConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Id>inv</Id><IsEnabled>true</IsEnabled>` +
		`<Destination><S3BucketDestination><Format>CSV</Format><Bucket>arn:aws:s3:::DEST</Bucket></S3BucketDestination></Destination>` +
		`<Schedule><Frequency>Daily</Frequency></Schedule><IncludedObjectVersions>All</IncludedObjectVersions></InventoryConfiguration>`
	notificationToQueue = `<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><QueueConfiguration><Id>q</Id>` +
		`<Queue>arn:aws:sqs:us-east-1:123456789012:outside</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`
	publicPolicyOn = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::DEST/*"}]}`
	denyPolicyOn   = `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::DEST/*"}]}`
)

func naming(doc, bucket string) []byte { return []byte(strings.ReplaceAll(doc, "DEST", bucket)) }

// configRequest is a PUT of a configuration subresource on bucket.
func configRequest(bucket, sub, id string, body []byte) RawRequest {
	q := url.Values{sub: {""}}
	if id != "" {
		q.Set("id", id)
	}
	return RawRequest{Method: http.MethodPut, Path: "/" + bucket, Query: q, Body: body}
}

// TestSecurityConfigurationBodiesStayInTheGrant (issue 32, finding 4): a
// key granted only mb1 set, through s3cond, replication and inventory
// writing to mb2, a notification to an outside queue and a policy making
// mb2 (or mb1) public, all answered 200: only the URL's bucket was checked.
// Against moto, which keeps what it is given, each is now 403 and nothing
// is stored; configurations naming only mb1 are still stored.
func TestSecurityConfigurationBodiesStayInTheGrant(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendMoto), WithConfig(func(c *Config) {
		c.Keys = append(c.Keys, KeyConfig{AccessKeyID: mbOnly.AccessKey, Secret: mbOnly.Secret, Buckets: []string{"mb1", "mbmapped"}, Access: "read-write"})
		// The client's mbmapped is the store's mb2: a body naming it would
		// reach the store's own mb2 under the client's name.
		c.Backend.Buckets = map[string]string{"mbmapped": "mb3"}
	}))
	e.RequireProxy(t)
	backend := e.BackendClient()
	for _, b := range []string{"mb1", "mb2", "control"} {
		CreateBucket(t, backend, b)
		Do(t, e.Store.Endpoint, e.Store.Cred, RawRequest{Method: http.MethodPut, Path: "/" + b, Query: url.Values{"versioning": {""}},
			Body: []byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`)})
	}
	stored := func(bucket, sub, id string) *RawResponse {
		q := url.Values{sub: {""}}
		if id != "" {
			q.Set("id", id)
		}
		return Do(t, e.Store.Endpoint, e.Store.Cred, RawRequest{Method: http.MethodGet, Path: "/" + bucket, Query: q})
	}
	refused := []struct {
		name, sub, id string
		body          []byte
	}{
		{"replication to mb2", "replication", "", naming(replicationTo, "mb2")},
		{"inventory to mb2", "inventory", "inv", naming(inventoryTo, "mb2")},
		{"notification to an outside queue", "notification", "", []byte(notificationToQueue)},
		{"policy with Principal * naming mb2", "policy", "", naming(publicPolicyOn, "mb2")},
		{"policy with Principal * on mb1 (not anonymous)", "policy", "", naming(publicPolicyOn, "mb1")},
	}
	for _, tc := range refused {
		// Control: moto itself takes the configuration (on a bucket of its
		// own), so only s3cond's check stands between the key and mb2.
		direct := Do(t, e.Store.Endpoint, e.Store.Cred, configRequest("control", tc.sub, tc.id, tc.body))
		if direct.Status/100 != 2 {
			t.Fatalf("control: moto refuses %s itself: %d %s", tc.name, direct.Status, direct.Body)
		}
		Do(t, e.Endpoint, mbOnly, configRequest("mb1", tc.sub, tc.id, tc.body)).RequireError(t, http.StatusForbidden, "AccessDenied")
		if got := stored("mb1", tc.sub, tc.id); got.Status == http.StatusOK && (tc.sub != "notification" || strings.Contains(string(got.Body), "outside")) {
			t.Errorf("%s: refused, yet moto keeps %s", tc.name, got.Body)
		}
	}

	// A granted bucket the store knows by another name: s3cond does not
	// rewrite bodies, so the name would mean the store's bucket of that
	// name. Refused as not implemented, nothing stored.
	Do(t, e.Endpoint, mbOnly, configRequest("mb1", "inventory", "inv", naming(inventoryTo, "mbmapped"))).RequireError(t, http.StatusNotImplemented, "NotImplemented")
	if got := stored("mb1", "inventory", "inv"); got.Status == http.StatusOK {
		t.Errorf("inventory to a mapped bucket: refused, yet moto keeps %s", got.Body)
	}

	// What names only mb1 is the key's to set, and is stored as sent.
	for _, tc := range []struct {
		name, sub, id string
		body          []byte
		want          string
	}{
		{"inventory to mb1", "inventory", "inv", naming(inventoryTo, "mb1"), "arn:aws:s3:::mb1"},
		{"a policy that only denies", "policy", "", naming(denyPolicyOn, "mb1"), "s3:DeleteObject"},
		{"replication to mb1", "replication", "", naming(replicationTo, "mb1"), "arn:aws:s3:::mb1"},
	} {
		if resp := Do(t, e.Endpoint, mbOnly, configRequest("mb1", tc.sub, tc.id, tc.body)); resp.Status/100 != 2 {
			t.Fatalf("%s: %d %s", tc.name, resp.Status, resp.Body)
		}
		if got := stored("mb1", tc.sub, tc.id); got.Status != http.StatusOK || !strings.Contains(string(got.Body), tc.want) {
			t.Errorf("%s: moto keeps %d %s", tc.name, got.Status, got.Body)
		}
	}
}
