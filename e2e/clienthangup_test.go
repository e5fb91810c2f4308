package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// A GET whose client hangs up mid-body (readers that fetch ranges
// speculatively do) was counted and logged as 500 InternalError, cause
// "context canceled", and an alert on 5xx paged on it. It is the client's
// hang-up: s3cond counts and logs it as 499, as nginx does.
func TestClientHangUpMidBodyIsCountedAs499(t *testing.T) {
	admin := testservers.FreeAddr(t)
	env := NewEnv(t, WithProcessEnv("S3COND_ADMIN_LISTEN="+admin),
		WithConfig(func(c *Config) { c.Log.Format = "json" }))
	env.RequireProxy(t)
	client := env.Client(t, env.RW)
	CreateBucket(t, client, "hangup")
	body := bytes.Repeat([]byte("speculative range "), 1<<19) // 9 MiB: more than the sockets buffer
	if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("hangup"),
		Key: aws.String("big"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("hangup"), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(out.Body, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	cancel()
	out.Body.Close()

	const hangUps = `s3cond_requests_total{operation="GetObject",status="499"} 1`
	metrics := waitForMetricLine(t, "http://"+admin+"/metrics", hangUps)
	if strings.Contains(metrics, `s3cond_requests_total{operation="GetObject",status="500"}`) {
		t.Fatalf("the hang-up was also counted as a 500:\n%s", metrics)
	}
	log := env.Proxies[0].Process.WaitForOutput(t, 10*time.Second, `"status":499`)
	if !strings.Contains(log, `"operation":"GetObject","bucket":"hangup","key":"big"`) || !strings.Contains(log, `"status":499`) {
		t.Fatalf("no access log line with status 499 for the GET:\n%s", log)
	}
	if strings.Contains(log, "InternalError") {
		t.Fatalf("the hang-up was logged as InternalError:\n%s", log)
	}
}

// waitForMetricLine scrapes url until its exposition holds line (a request
// is counted after its handler returns, which may be after the client left),
// and returns the last scrape.
func waitForMetricLine(t *testing.T, url, line string) string {
	t.Helper()
	var text string
	testkit.Within(t, 10*time.Second, "the metric line "+line, func(context.Context) error {
		if text = scrape(t, url); !strings.Contains(text, line+"\n") {
			return fmt.Errorf("not in the metrics:\n%s", text)
		}
		return nil
	})
	return text
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d, %v", url, resp.StatusCode, err)
	}
	return string(b)
}
