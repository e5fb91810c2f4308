package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPRelayForwardsRequestsWithTheClientsHost: a PUT's body and a
// GET's answer pass through unchanged, under the Host the client sent (the
// store checks the client's own signature, which covers Host), and Serve
// returns nil once its context is cancelled. The target is an
// httptest-style server standing for the S3 store.
func TestHTTPRelayForwardsRequestsWithTheClientsHost(t *testing.T) {
	targetLn := listenLoopback(t)
	var stored string
	target := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "bucket.example" {
			http.Error(w, "host "+r.Host, http.StatusBadRequest)
			return
		}
		switch r.Method {
		case http.MethodPut:
			body, _ := io.ReadAll(r.Body)
			stored = string(body)
		case http.MethodGet:
			io.WriteString(w, stored)
		}
	})}
	go target.Serve(targetLn)
	t.Cleanup(func() { target.Close() })

	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&HTTPRelay{Target: targetLn.Addr().String()}).Serve(ctx, ln) }()

	client := &http.Client{Timeout: relayTestTimeout}
	send := func(method, body string) string {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+ln.Addr().String()+"/key", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "bucket.example"
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", method, resp.StatusCode, got)
		}
		return string(got)
	}
	send(http.MethodPut, "four kibibytes, more or less")
	if got := send(http.MethodGet, ""); got != "four kibibytes, more or less" {
		t.Fatalf("GET through the relay = %q", got)
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(relayTestTimeout):
		t.Fatal(errors.New("Serve did not return after its context was cancelled"))
	}
}
