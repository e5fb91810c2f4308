package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Issue 13, hole 7: a signed conditional PUT over 64 KiB that stops
// sending held a client socket, a backend socket and its lease for as long
// as the client liked. With server.body_idle_timeout it ends as on S3:
// 400 RequestTimeout, nothing stored, the lease free for the next writer.
func TestStalledConditionalUploadTimesOutAndFreesTheKey(t *testing.T) {
	env := NewEnv(t, WithConfig(func(c *Config) { c.Server.BodyIdleTimeout = "1s" }))
	env.RequireProxy(t)
	client := env.Client(t, env.RW)
	CreateBucket(t, client, "stalled")

	const size = 256 << 10
	req, err := http.NewRequest(http.MethodPut, env.Endpoint+"/stalled/k", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", "*")
	if _, err := SignRequest(req, env.RW, UnsignedPayload, time.Now()); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.Endpoint, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var wire bytes.Buffer
	wire.WriteString("PUT /stalled/k HTTP/1.1\r\nHost: " + req.Host + "\r\nContent-Length: 262144\r\n")
	_ = req.Header.Write(&wire)
	wire.WriteString("\r\n")
	wire.Write(bytes.Repeat([]byte("s"), size/2)) // half the body, then silence
	start := time.Now()
	if _, err := conn.Write(wire.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the stalled upload: %v", err)
	}
	raw := &RawResponse{Status: resp.StatusCode, Header: resp.Header}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	raw.Body = body.Bytes()
	raw.RequireError(t, http.StatusBadRequest, "RequestTimeout")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("RequestTimeout after %s, want about the 1 s timeout", took)
	}

	ctx := context.Background()
	if _, err := env.BackendClient().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("stalled"), Key: aws.String("k")}); err == nil {
		t.Fatal("versitygw stored the stalled upload")
	}
	// The lease is free: a conditional create succeeds at once, without
	// waiting for the stalled writer's lease to expire (20 s).
	createCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := client.PutObject(createCtx, &s3.PutObjectInput{Bucket: aws.String("stalled"), Key: aws.String("k"),
		Body: strings.NewReader("second"), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("conditional create after the stalled one: %v", err)
	}
}
