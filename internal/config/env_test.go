package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEnvOverridesNestedKeysAndListEntries(t *testing.T) {
	env := append(testEnv,
		"S3COND_SERVER_LISTEN=0.0.0.0:9100",
		"S3COND_BACKEND_TYPE=s3",
		"S3COND_BACKEND_ENDPOINT=http://minio:9000",
		"S3COND_BACKEND_CREDENTIALS_SOURCE=env",
		"S3COND_BACKEND_CREDENTIALS_ACCESS_KEY_ID_ENV=MINIO_USER",
		"S3COND_BACKEND_CREDENTIALS_SECRET_ACCESS_KEY_ENV=MINIO_PASSWORD",
		"MINIO_USER=minio", "MINIO_PASSWORD=minio-secret",
		"S3COND_BACKEND_BUCKETS=analytics=prod-analytics, logs=prod-logs",
		"S3COND_KEYS_0_ACCESS_KEY_ID=first",
		"S3COND_KEYS_0_SECRET=first-secret",
		"S3COND_KEYS_0_BUCKETS=*",
		"S3COND_KEYS_0_ACCESS=read-write",
		"S3COND_KEYS_1_ACCESS_KEY_ID=second",
		"S3COND_KEYS_1_SECRET=second-secret",
		"S3COND_KEYS_1_BUCKETS=analytics, logs-*",
		"S3COND_KEYS_1_ACCESS=read-only",
		"S3COND_LEASE_STORE=dynamodb",
		"S3COND_LEASE_DYNAMODB_ENDPOINT=http://127.0.0.1:4566",
		"S3COND_LEASE_TIMEOUT=30s",
		"S3COND_LEASE_MAX_CLOCK_SKEW_RATE=2.5",
		"S3COND_CONFIG=/etc/s3cond.yaml", // names the file, not a key
	)
	cfg, err := Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"server.listen":           {cfg.Server.Listen, "0.0.0.0:9100"},
		"backend.endpoint":        {cfg.Backend.Endpoint, "http://minio:9000"},
		"backend credentials":     {cfg.Backend.Credentials.AccessKeyID + "/" + cfg.Backend.Credentials.SecretAccessKey, "minio/minio-secret"},
		"backend.buckets":         {cfg.Backend.Buckets, map[string]string{"analytics": "prod-analytics", "logs": "prod-logs"}},
		"keys[0]":                 {cfg.Keys[0], Key{AccessKeyID: "first", Secret: "first-secret", Buckets: []string{"*"}, Access: AccessReadWrite}},
		"keys":                    {len(cfg.Keys), 2}, // the development key is gone
		"keys[1]":                 {cfg.Keys[1], Key{AccessKeyID: "second", Secret: "second-secret", Buckets: []string{"analytics", "logs-*"}, Access: AccessReadOnly}},
		"lease.dynamodb.endpoint": {cfg.Lease.DynamoDB.Endpoint, "http://127.0.0.1:4566"},
		"lease.timeout":           {cfg.Lease.Timeout, 30 * time.Second},
		"lease.max_clock_skew":    {cfg.Lease.MaxClockSkewRate, 2.5},
		"lease.poll_interval":     {cfg.Lease.PollInterval, 100 * time.Millisecond},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s = %#v, want %#v", name, c[0], c[1])
		}
	}
}

func TestEnvOverridesWinOverTheFile(t *testing.T) {
	cfg, err := Load("testdata/good/minimal.yaml", append(testEnv, "S3COND_KEYS_0_ACCESS=read-only", "S3COND_LOG_LEVEL=debug"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Keys[0].Access != AccessReadOnly || cfg.Keys[0].AccessKeyID != "minimal-key" || cfg.Log.Level != "debug" {
		t.Errorf("got %+v %+v", cfg.Keys[0], cfg.Log)
	}
}

func TestEnvErrorsNameTheVariable(t *testing.T) {
	cases := map[string]string{
		"S3COND_LEASE_TTL=soon":            `config: lease.ttl: "soon" is not a duration (write it like 100ms, 20s or 1h) (from S3COND_LEASE_TTL)`,
		"S3COND_BACKEND_BUCKETS=a":         `config: backend.buckets: "a" is not a list of client=backend pairs (from S3COND_BACKEND_BUCKETS)`,
		"S3COND_KEYS_5000_SECRET=s":        "config: keys: list index 5000 in S3COND_KEYS_5000_SECRET is larger than 999",
		"S3COND_KEYS_1_SECRET=s":           "config: keys[0].access_key_id: must be set", // env keys replace the dev key
		"S3COND_KEYS_0_ACCESS_KEY_ID=prod": "config: keys[0].secret: must be set (or name an environment variable in secret_env)",
		"S3COND_LEASE_DYNAMODB_REGION=us":  "", // valid: region of an unused store
	}
	for entry, want := range cases {
		_, err := Load("", append(testEnv, entry))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", entry, got, want)
		}
	}
}

// Every key must be overridable: set each leaf through its derived variable
// and read it back through reflection.
func TestEveryKeyIsOverridableFromTheEnvironment(t *testing.T) {
	cfg := Default()
	var env []string
	want := map[string]any{}
	for _, leaf := range leafKeys(reflect.TypeOf(*cfg), "") {
		var text string
		var value any
		switch leaf.typ {
		case durationType:
			text, value = "7s", 7*time.Second
		case stringsType:
			text, value = "alpha,beta", []string{"alpha", "beta"}
		case stringMapType:
			text, value = "src=dst", map[string]string{"src": "dst"}
		default:
			switch leaf.typ.Kind() {
			case reflect.Float64:
				text, value = "2.5", 2.5
			case reflect.Int:
				text, value = "42", 42
			case reflect.Bool:
				text, value = "true", true
			case reflect.String:
				text, value = "value-of-"+leaf.key, "value-of-"+leaf.key
			default:
				t.Fatalf("%s has unsupported type %s", leaf.key, leaf.typ)
			}
		}
		env = append(env, EnvName(leaf.key)+"="+text)
		want[leaf.key] = value
	}
	unused, err := applyEnv(cfg, environment(env))
	if err != nil || len(unused) > 0 {
		t.Fatalf("applyEnv: %v, unused %v", err, unused)
	}
	for key, value := range want {
		got := valueAt(reflect.ValueOf(*cfg), key)
		if !reflect.DeepEqual(got, value) {
			t.Errorf("%s (%s) = %#v, want %#v", key, EnvName(key), got, value)
		}
	}
}

func TestEnvNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, leaf := range leafKeys(reflect.TypeOf(Config{}), "") {
		name := EnvName(leaf.key)
		if other, dup := seen[name]; dup {
			t.Errorf("%s and %s share %s", leaf.key, other, name)
		}
		seen[name] = leaf.key
	}
	if got := EnvName("keys[0].secret_env"); got != "S3COND_KEYS_0_SECRET_ENV" {
		t.Errorf("EnvName = %s", got)
	}
}

type leafKey struct {
	key string // e.g. "keys[0].secret"
	typ reflect.Type
}

// leafKeys lists every settable key of t, with list entries at index 0.
func leafKeys(t reflect.Type, prefix string) []leafKey {
	var leaves []leafKey
	for i := range t.NumField() {
		f := t.Field(i)
		key := joinKey(prefix, yamlName(f))
		switch {
		case isLeaf(f.Type):
			leaves = append(leaves, leafKey{key, f.Type})
		case f.Type.Kind() == reflect.Struct:
			leaves = append(leaves, leafKeys(f.Type, key)...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			leaves = append(leaves, leafKeys(f.Type.Elem(), key+"[0]")...)
		default:
			panic(fmt.Sprintf("%s: unsupported type %s", key, f.Type))
		}
	}
	return leaves
}

// valueAt reads the value at a key path such as "keys[0].secret".
func valueAt(v reflect.Value, key string) any {
	for _, part := range strings.Split(key, ".") {
		name, index, indexed := strings.Cut(part, "[")
		v = v.Field(structFields(v.Type())[name])
		if indexed {
			var i int
			fmt.Sscanf(index, "%d]", &i)
			v = v.Index(i)
		}
	}
	return v.Interface()
}

func TestUnusedEnvListsVariablesThatNameNoKey(t *testing.T) {
	env := append(testEnv,
		"S3COND_LEASE_TIMOUT=1s",         // typo
		"S3COND_KEYS_X_SECRET=1",         // not an index
		"S3COND_BIN=/usr/bin/s3cond",     // a tool's variable
		"S3COND_LEASE_TIMEOUT=1s",        // a key
		"S3COND_KEYS_3_SECRET=s",         // a key at any index
		"S3COND_CONFIG=/etc/s3cond.yaml", // reserved
		"S3COND_READER_SECRET=r",         // read by secret_env below
	)
	cfg := Default()
	cfg.Keys[0].SecretEnv = "S3COND_READER_SECRET"
	got := cfg.UnusedEnv(env)
	want := []string{"S3COND_BIN", "S3COND_KEYS_X_SECRET", "S3COND_LEASE_TIMOUT"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnusedEnv = %v, want %v", got, want)
	}
	// They do not stop Load.
	if _, err := Load("", append(testEnv, "S3COND_LEASE_TIMOUT=1s", "S3COND_BIN=x")); err != nil {
		t.Errorf("Load with unused variables: %v", err)
	}
}
