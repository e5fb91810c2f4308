package proxy

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// storeDeletes counts the deletes (DeleteObject, DeleteObjects) the store
// behind the fixture receives.
type storeDeletes struct{ n atomic.Int64 }

func (d *storeDeletes) hook(r *http.Request) {
	if r.Method == http.MethodDelete || (r.Method == http.MethodPost && r.URL.Query().Has("delete")) {
		d.n.Add(1)
	}
}

// With backend.refuse_conditional_deletes on a backend served without
// leases (versitygw v1.8.0, whose conditional delete races its writes),
// every conditional delete is 501 and reaches nothing; the object stays;
// unconditional deletes are served.
func TestConditionalDeletesRefusedReachNothing(t *testing.T) {
	var deletes storeDeletes
	f := newFixtureWith(t, fixtureOptions{native: true, refuseConditionalDeletes: true, backendHook: deletes.hook})
	out, err := f.put(t, "kept", "body", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, bucket := context.Background(), aws.String(bucketName)
	for name, del := range map[string]func() error{
		"DeleteObject If-Match": func() error {
			_, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("kept"), IfMatch: out.ETag})
			return err
		},
		"DeleteObject x-amz-if-match-size": func() error {
			_, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("kept"), IfMatchSize: aws.Int64(4)})
			return err
		},
		"DeleteObjects with one entry ETag among plain ones": func() error {
			_, err := f.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
				{Key: aws.String("other")}, {Key: aws.String("kept"), ETag: out.ETag},
			}}})
			return err
		},
	} {
		if code := errorCode(del()); code != "NotImplemented" {
			t.Errorf("%s: %q, want NotImplemented", name, code)
		}
	}
	if n := deletes.n.Load(); n != 0 {
		t.Fatalf("the store received %d deletes for refused requests", n)
	}
	if _, err := f.get(t, "kept"); err != nil {
		t.Fatalf("the object after refused deletes: %v", err)
	}
	if _, err := f.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("other")}}}}); err != nil {
		t.Fatalf("an unconditional DeleteObjects: %v", err)
	}
	if _, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("kept")}); err != nil {
		t.Fatalf("an unconditional DeleteObject: %v", err)
	}
	if _, err := f.get(t, "kept"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("the object after an unconditional delete: %v, want NoSuchKey", err)
	}
}

// The control: the same deletes without the setting are served.
func TestConditionalDeletesServedWithoutRefusal(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{native: true})
	out, err := f.put(t, "gone", "body", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucketName), Key: aws.String("gone"), IfMatch: out.ETag}); err != nil {
		t.Fatalf("DeleteObject If-Match: %v", err)
	}
}
