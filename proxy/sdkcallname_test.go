package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// x-id names the call for the SDK; a store must not route by it, so it is
// never sent on: the store reads the sub-resources s3cond classified and
// authorised. The SDK's own requests (aws-sdk-go-v2 adds x-id=GetObject,
// x-id=PutObject, x-id=ListBucketAnalyticsConfigurations, ...) keep working.
func TestSDKCallNameIsNotForwarded(t *testing.T) {
	proxyURL, store := configProxy(t)
	onlyQuery := func(t *testing.T, call, want string) {
		t.Helper()
		if len(store.requests) != 1 || store.requests[0].rawQuery != want {
			t.Errorf("%s: the store got %+v, want one request with the query %q", call, store.requests, want)
		}
	}
	tags := `<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`
	store.answer(http.StatusOK, "")
	status, answer := grantedDo(t, "PUT", proxyURL+"/alpha?tagging&x-id=PutBucketReplication", nil, []byte(tags))
	if status != http.StatusOK {
		t.Fatalf("tags with a foreign x-id: %d %s", status, answer)
	}
	onlyQuery(t, "tags with x-id=PutBucketReplication", "tagging")

	client := newClient(proxyURL, grantedID)
	ctx := context.Background()
	store.answer(http.StatusOK, "")
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("alpha"), Key: aws.String("k"), Body: strings.NewReader("data")}); err != nil {
		t.Fatalf("SDK PutObject: %v", err)
	}
	onlyQuery(t, "SDK PutObject (x-id=PutObject)", "")
	store.answer(http.StatusOK, "")
	if _, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("k")}); err != nil {
		t.Fatalf("SDK GetObject: %v", err)
	}
	onlyQuery(t, "SDK GetObject (x-id=GetObject)", "")
	store.answer(http.StatusOK, `<ListBucketAnalyticsConfigurationResult><IsTruncated>false</IsTruncated></ListBucketAnalyticsConfigurationResult>`)
	if _, err := client.ListBucketAnalyticsConfigurations(ctx, &s3.ListBucketAnalyticsConfigurationsInput{Bucket: aws.String("alpha")}); err != nil {
		t.Fatalf("SDK ListBucketAnalyticsConfigurations: %v", err)
	}
	onlyQuery(t, "SDK ListBucketAnalyticsConfigurations", "analytics")

	// Not sent, yet still read: a value outside its grammar is refused.
	store.answer(http.StatusOK, "")
	if status, answer := grantedDo(t, "GET", proxyURL+"/alpha/k?x-id=%23", nil, nil); status != http.StatusBadRequest || !strings.Contains(answer, "InvalidArgument") {
		t.Errorf("x-id=#: %d %s, want 400 InvalidArgument", status, answer)
	}
}
