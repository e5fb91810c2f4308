package config

import (
	"reflect"
	"testing"
)

// The issue names these variables; they must come from the yaml tags as
// every other key's do, comma-separated as lists are.
func TestWritePoliciesComeFromTheEnvironment(t *testing.T) {
	env := append(testEnv,
		"S3COND_REQUIRE_CONDITIONAL_WRITES=ledger, tables-*",
		"S3COND_REQUIRE_CONDITIONAL_DELETES=ledger",
		"S3COND_CREATE_ONLY=archive-*,backups",
	)
	cfg, err := Load("testdata/good/minimal.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2][]string{
		"require_conditional_writes":  {cfg.RequireConditionalWrites, {"ledger", "tables-*"}},
		"require_conditional_deletes": {cfg.RequireConditionalDeletes, {"ledger"}},
		"create_only":                 {cfg.CreateOnly, {"archive-*", "backups"}},
	}
	for key, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s = %q, want %q", key, c[0], c[1])
		}
	}
}

func TestWritePoliciesAreOffByDefault(t *testing.T) {
	d := Default()
	if len(d.RequireConditionalWrites)+len(d.RequireConditionalDeletes)+len(d.CreateOnly) != 0 {
		t.Fatalf("a default configuration has write policies: %v %v %v", d.RequireConditionalWrites, d.RequireConditionalDeletes, d.CreateOnly)
	}
}
