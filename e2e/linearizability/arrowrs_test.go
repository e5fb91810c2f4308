package linearizability

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/arrowrs"
)

// An s3cond with lease.dynamodb.key_format: arrow-rs and an arrow-rs
// object_store client (its DynamoDB requests replayed by internal/arrowrs)
// share one table and one bucket: each one's lock blocks the other.
func TestArrowRSClientAndS3condBlockEachOther(t *testing.T) {
	c := NewCluster(t, ClusterOptions{DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(), DelayBackend: true,
		Env: []string{"S3COND_LEASE_DYNAMODB_KEY_FORMAT=arrow-rs", "S3COND_LEASE_DYNAMODB_BUCKET=" + testBucket}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ddb, err := dynamostore.NewClient(ctx, e2e.Region, c.Moto.Endpoint,
		credentials.NewStaticCredentialsProvider("testing", "testing", ""))
	if err != nil {
		t.Fatal(err)
	}
	arrow := arrowrs.New(ddb, c.Config.Lease.DynamoDB.Table)

	// arrow-rs holds the lock on "from-arrow" (a 20 s lease: s3cond waits
	// 40 s before a takeover, beyond its 3 s wait budget).
	if _, ok, err := arrow.TryLock(ctx, "from-arrow", "", nil); !ok || err != nil {
		t.Fatalf("arrow-rs try_lock: ok=%v, %v", ok, err)
	}
	resp := rawConditionalPut(t, c, "from-arrow")
	if doc, _ := resp.Error(); resp.Status != http.StatusConflict || doc.Code != "ConditionalRequestConflict" {
		t.Fatalf("s3cond create while arrow-rs holds the lock: %d %s; want 409 ConditionalRequestConflict", resp.Status, resp.Body)
	}
	requireBackendValue(t, c, "from-arrow", "")

	// s3cond holds the lease of a create of "from-s3cond" (its final bytes
	// wait in the delay proxy): arrow-rs's try_lock meets it.
	upload := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, "from-s3cond",
		http.Header{"If-None-Match": {"*"}}, Body("s3cond", heldBodySize), heldBodySize/2, c.Delay)
	held, err := upload.HoldAtBackend(c.Delay, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lease, ok, err := arrow.TryLock(ctx, "from-s3cond", "", nil)
	held.Resume()
	if ok || err != nil {
		t.Fatalf("arrow-rs try_lock while s3cond holds the lease: ok=%v, %v; want a conflict", ok, err)
	}
	if lease.Timeout != LeaseTimeout {
		t.Fatalf("arrow-rs read s3cond's lease as %+v; want timeout %s", lease, LeaseTimeout)
	}
	if resp, err := upload.Wait(15 * time.Second); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("s3cond's create: %v, %v", resp, err)
	}
	requireBackendValue(t, c, "from-s3cond", "s3cond")

	// The row is named as arrow-rs names it: the key, without the bucket.
	for path, want := range map[string]bool{"from-s3cond": true, testBucket + "/from-s3cond": false} {
		out, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(arrow.Table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: "*"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(out.Item) > 0; got != want {
			t.Fatalf("row %q exists: %v, want %v", path, got, want)
		}
	}

	// The table leases one bucket: a conditional write to another gets 501.
	if _, err := c.Client(0, 15*time.Second).CreateBucket(ctx, bucketInput("other")); err != nil {
		t.Fatal(err)
	}
	other, err := e2e.DoContext(ctx, c.Proxies[0].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
		Path: "/other/k", Header: http.Header{"If-None-Match": {"*"}}, Body: Body("other", 64)})
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := other.Error(); other.Status != http.StatusNotImplemented || doc.Code != "NotImplemented" {
		t.Fatalf("conditional PUT to another bucket: %d %s; want 501 NotImplemented", other.Status, other.Body)
	}
}
