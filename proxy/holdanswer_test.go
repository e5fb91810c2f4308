package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/frontconn"
)

// serveAsApp starts the front server as app.Serve does: accepted
// connections can hold a small answer back and send it in one write.
func serveAsApp(h http.Handler) *httptest.Server {
	front := httptest.NewUnstartedServer(h)
	front.Listener = frontconn.Listener{Listener: front.Listener}
	front.Config.ConnContext = frontconn.NewContext
	front.Start()
	return front
}

// heldDo sends a signed request through client and returns the answer,
// whether its connection was reused, and the body read (or the read error).
func heldDo(t *testing.T, client *http.Client, method, target string, body []byte, header http.Header) (*http.Response, bool, []byte, error) {
	t.Helper()
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), method, target, bytes.NewReader(body))
	for name, values := range header {
		req.Header[name] = values
	}
	signWithTestKey(t, req, body)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return resp, reused, got, err
}

func TestSmallAnswersLeaveWholeAndKeepTheConnection(t *testing.T) {
	object := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB
	proxyURL, _ := scriptedProxyServedBy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("ETag", `"e"`)
		if r.Method == http.MethodPut {
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(object)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(object)
		}
	}, serveAsApp)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	for i, step := range []struct {
		method string
		body   []byte
		header http.Header
	}{
		{http.MethodGet, nil, nil},
		{http.MethodHead, nil, nil},
		{http.MethodPut, object, http.Header{"Expect": {"100-continue"}}},
		{http.MethodGet, nil, nil},
	} {
		resp, reused, got, err := heldDo(t, client, step.method, proxyURL+"/"+bucketName+"/k", step.body, step.header)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, read error %v", step.method, resp.StatusCode, err)
		}
		if i > 0 && !reused {
			t.Errorf("%s: a new connection; the previous answer did not end cleanly", step.method)
		}
		if want := object; step.method == http.MethodGet && !bytes.Equal(got, want) {
			t.Errorf("GET read %d bytes, want the 4 KiB object", len(got))
		}
		if step.method == http.MethodHead && (len(got) != 0 || resp.ContentLength != int64(len(object))) {
			t.Errorf("HEAD: %d body bytes, Content-Length %d", len(got), resp.ContentLength)
		}
	}
}

// A store that breaks off a small answer mid-body: the client's answer is
// cut too, never a short body that looks complete.
func TestSmallAnswerCutByTheStoreIsCutForTheClient(t *testing.T) {
	proxyURL, _ := scriptedProxyServedBy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "8192")
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}, serveAsApp)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	_, _, got, err := heldDo(t, client, http.MethodGet, proxyURL+"/"+bucketName+"/k", nil, nil)
	if err == nil {
		t.Fatalf("the client read %d bytes and no error from a cut answer", len(got))
	}
}
