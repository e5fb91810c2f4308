package s3xml

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// exchange is one request body the AWS SDK sent and the body the server answered.
type exchange struct {
	query    string
	request  []byte
	response []byte
}

// recorder sits between the real AWS SDK and gofakes3 (an in-memory S3
// server) and keeps the XML both sides produced, so the readers are checked
// against real client output and real server output rather than only
// hand-written documents.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	log  []exchange
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	tw := &teeWriter{ResponseWriter: w}
	rec.next.ServeHTTP(tw, r)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.log = append(rec.log, exchange{query: r.URL.RawQuery, request: body, response: tw.buf.Bytes()})
}

func (rec *recorder) last(t *testing.T) exchange {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.log) == 0 {
		t.Fatal("no request recorded")
	}
	return rec.log[len(rec.log)-1]
}

func TestReadersUnderstandAWSSDKAndGofakes3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &recorder{next: gofakes3.New(s3mem.New()).Server()}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	client := s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(srv.URL),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
	const bucket = "s3xml-test"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	put := func(key, body string) {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	put("a & b", "one")
	put("dir/<two>", "two")
	put("copy", "three")

	t.Run("DeleteObjects", func(t *testing.T) {
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{
			Objects: []types.ObjectIdentifier{{Key: aws.String("a & b")}, {Key: aws.String("dir/<two>")}, {Key: aws.String("copy"), ETag: aws.String(`"whatever"`)}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ex := rec.last(t)
		req, err := ParseDeleteRequest(bytes.NewReader(ex.request), 0)
		if err != nil {
			t.Fatalf("SDK request rejected: %v\n%s", err, ex.request)
		}
		want := []ObjectIdentifier{{Key: "a & b"}, {Key: "dir/<two>"}, {Key: "copy", ETag: `"whatever"`}}
		if len(req.Objects) != len(want) {
			t.Fatalf("objects %+v", req.Objects)
		}
		for i := range want {
			if req.Objects[i] != want[i] {
				t.Fatalf("object %d = %+v, want %+v", i, req.Objects[i], want[i])
			}
		}
		res, err := ParseDeleteResult(bytes.NewReader(ex.response), 0)
		if err != nil {
			t.Fatalf("%v\n%s", err, ex.response)
		}
		if len(res.Deleted) != len(out.Deleted) || len(res.Errors) != len(out.Errors) {
			t.Fatalf("parsed %d deleted / %d errors, SDK read %d / %d", len(res.Deleted), len(res.Errors), len(out.Deleted), len(out.Errors))
		}
		// The rendered result must be readable by the SDK's own deserializer:
		// serve it from a stub (standing for s3cond answering a client) and let the SDK parse it.
		rendered := res.Marshal()
		stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write(rendered)
		}))
		defer stub.Close()
		stubClient := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(stub.URL), UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})
		again, err := stubClient.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("x")}}}})
		if err != nil {
			t.Fatalf("SDK cannot read our DeleteResult: %v\n%s", err, rendered)
		}
		if len(again.Deleted) != len(res.Deleted) || aws.ToString(again.Deleted[0].Key) != res.Deleted[0].Key {
			t.Fatalf("SDK read %+v from %s", again.Deleted, rendered)
		}
	})
}
