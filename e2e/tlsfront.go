package e2e

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// TLSFront is an HTTPS reverse proxy in front of an endpoint. aws-sdk-go-v2
// sends its default STREAMING-UNSIGNED-PAYLOAD-TRAILER uploads only over TLS,
// so the tests put this in front of plain-HTTP s3cond to see that mode. It
// keeps the client's Host header (part of the signature) and records the
// payload modes (x-amz-content-sha256) that went through.
type TLSFront struct {
	URL    string
	Client *http.Client // trusts the front's certificate
	// CertPEM is the front's certificate, for a client in another process.
	CertPEM []byte

	mu    sync.Mutex
	modes map[string]int
}

// NewTLSFront starts the front and closes it when the test ends.
func NewTLSFront(t testing.TB, target string) *TLSFront {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatalf("parse %s: %v", target, err)
	}
	f := &TLSFront{modes: map[string]int{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host
			f.record(pr.In.Header.Get("X-Amz-Content-Sha256"))
		},
		FlushInterval: -1,
	}
	srv := httptest.NewTLSServer(proxy)
	t.Cleanup(srv.Close)
	f.URL, f.Client = srv.URL, srv.Client()
	f.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return f
}

func (f *TLSFront) record(mode string) {
	if len(mode) == 64 {
		mode = "<hex sha256>"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes[mode]++
}

// Modes returns how many requests used each payload mode.
func (f *TLSFront) Modes() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.modes))
	for k, v := range f.modes {
		out[k] = v
	}
	return out
}
