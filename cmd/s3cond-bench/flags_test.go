package main

import (
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestFlagsTakeCredentialsFromTheEnvironment(t *testing.T) {
	cfg, err := parseFlags([]string{"--endpoint", "http://127.0.0.1:9000", "--compare", "http://127.0.0.1:7070"},
		env(map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_REGION": "eu-west-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.primary.AccessKey != "AK" || cfg.primary.SecretKey != "SK" || cfg.primary.Region != "eu-west-1" {
		t.Errorf("primary %+v", cfg.primary)
	}
	// Without --compare-* keys the second endpoint uses the same ones.
	if cfg.compare == nil || cfg.compare.AccessKey != "AK" || cfg.compare.Label != "direct" {
		t.Errorf("compare %+v", cfg.compare)
	}
	if len(cfg.plan) != 10 || cfg.duration != 10*time.Second {
		t.Errorf("defaults: %d workloads, %v", len(cfg.plan), cfg.duration)
	}
}

func TestOpsAloneBoundsTheRun(t *testing.T) {
	cfg, err := parseFlags([]string{"--endpoint", "http://x:1", "--access-key", "a", "--secret-key", "s",
		"--ops", "5", "--workload", "put-1g:1"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ops != 5 || cfg.duration != 0 {
		t.Errorf("ops %d duration %v; want 5 and no time limit", cfg.ops, cfg.duration)
	}
	cfg, err = parseFlags([]string{"--endpoint", "http://x:1", "--ops", "5", "--duration", "3s"}, env(nil))
	if err != nil || cfg.duration != 3*time.Second {
		t.Errorf("explicit --duration with --ops: %v, %v", cfg.duration, err)
	}
}

func TestFlagErrors(t *testing.T) {
	cases := map[string][]string{
		"--endpoint is required":   {"--workers", "2"},
		"workers":                  {"--endpoint", "http://x:1", "--workers", "0"},
		"unknown workload":         {"--endpoint", "http://x:1", "--workload", "bogus"},
		"must differ":              {"--endpoint", "http://x:1", "--compare", "http://y:1", "--compare-label", "s3cond"},
		"positive --duration":      {"--endpoint", "http://x:1", "--duration", "0s"},
		"unexpected argument":      {"--endpoint", "http://x:1", "extra"},
		"flag provided but not de": {"--nope"},
	}
	for want, args := range cases {
		_, err := parseFlags(args, env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one containing %q", args, err, want)
		}
	}
}

func TestFlagsPreferCommandLineKeysOverTheEnvironment(t *testing.T) {
	cfg, err := parseFlags([]string{"--endpoint", "http://x:1", "--access-key", "cli", "--secret-key", "cli-secret"},
		env(map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.primary.AccessKey != "cli" || cfg.primary.SecretKey != "cli-secret" {
		t.Errorf("primary %+v, want the command-line keys", cfg.primary)
	}
}

func TestRelayFlags(t *testing.T) {
	cfg, err := parseRelayFlags([]string{"--listen", "127.0.0.1:9100", "--to", "127.0.0.1:7070"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.listen != "127.0.0.1:9100" || cfg.target != "127.0.0.1:7070" {
		t.Errorf("config %+v", cfg)
	}
	errorCases := map[string][]string{
		"--listen is required":     {"--to", "127.0.0.1:7070"},
		"--to is required":         {"--listen", "127.0.0.1:9100"},
		"missing port":             {"--listen", "127.0.0.1", "--to", "127.0.0.1:7070"},
		"unexpected argument":      {"--listen", "127.0.0.1:9100", "--to", "127.0.0.1:7070", "extra"},
		"flag provided but not de": {"--endpoint", "http://x:1"},
	}
	for want, args := range errorCases {
		_, err := parseRelayFlags(args)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one containing %q", args, err, want)
		}
	}
}
