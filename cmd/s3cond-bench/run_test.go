package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rs/zerolog"
)

// TestRunWritesAllReports drives the command's whole path (flags, bucket
// creation, the suite, the three outputs) against two in-memory gofakes3
// servers, which stand for s3cond and its backend.
func TestRunWritesAllReports(t *testing.T) {
	primary := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer primary.Close()
	direct := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer direct.Close()
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "out.json"), filepath.Join(dir, "out.md")
	cfg, err := parseFlags([]string{
		"--endpoint", primary.URL, "--compare", direct.URL, "--access-key", "k", "--secret-key", "s",
		"--workload", "put-4k:2,get-4k:2", "--ops", "5", "--json", jsonPath, "--markdown", mdPath,
	}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, progress strings.Builder
	failed, err := run(context.Background(), cfg, &stdout, &progress, zerolog.Nop())
	if err != nil || failed != 0 {
		t.Fatalf("run: %d failed, %v\n%s", failed, err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "direct ops/s") {
		t.Errorf("stdout has no comparison:\n%s", stdout.String())
	}
	var doc struct {
		Results []struct {
			Workload string `json:"workload"`
			Target   string `json:"target"`
			Ops      int64  `json:"ops"`
		} `json:"results"`
		Comparisons []json.RawMessage `json:"comparisons"`
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 4 || len(doc.Comparisons) != 2 {
		t.Fatalf("%d results, %d comparisons; want 4 and 2", len(doc.Results), len(doc.Comparisons))
	}
	for _, r := range doc.Results {
		if r.Ops != 5 {
			t.Errorf("%s on %s: %d ops, want 5", r.Workload, r.Target, r.Ops)
		}
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| put-4k | 2 |") {
		t.Errorf("markdown lacks the put-4k row:\n%s", md)
	}
}

func TestRunRelayReportsAnAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = runRelay(ctx, relayConfig{listen: taken.Addr().String(), target: "127.0.0.1:1"}, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("relay on a taken port: %v, want address already in use", err)
	}
}
