package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestMaskedHidesEverySecret(t *testing.T) {
	cfg := Default()
	cfg.Backend.Credentials = Credentials{Source: CredentialsStatic, AccessKeyID: "backend-id", SecretAccessKey: "backend-secret-value"}
	cfg.Lease.DynamoDB.Credentials = Credentials{Source: CredentialsStatic, AccessKeyID: "ddb-id", SecretAccessKey: "ddb-secret-value"}
	cfg.Keys = append(cfg.Keys, Key{AccessKeyID: "second-id", Secret: "second-secret-value", Buckets: []string{"b1"}, Access: AccessReadOnly})
	cfg.Backend.Buckets = map[string]string{"client": "backend"}
	original, err := Render(cfg)
	if err != nil {
		t.Fatal(err)
	}

	masked := cfg.Masked()
	out, err := Render(masked)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, secret := range []string{DevSecret, "backend-secret-value", "ddb-secret-value", "second-secret-value"} {
		if strings.Contains(text, secret) {
			t.Errorf("masked output shows %q:\n%s", secret, text)
		}
	}
	for _, visible := range []string{DevAccessKeyID, "backend-id", "ddb-id", "second-id"} {
		if !strings.Contains(text, visible) {
			t.Errorf("masked output lost non-secret %q", visible)
		}
	}
	if strings.Count(text, MaskedValue) != 4 {
		t.Errorf("want 4 masked values:\n%s", text)
	}

	// Masked must not write through to the original.
	masked.Keys[0].Buckets[0] = "changed"
	masked.Backend.Buckets["client"] = "changed"
	after, _ := Render(cfg)
	if string(after) != string(original) {
		t.Errorf("Masked changed the original config")
	}
}

func TestMaskedLeavesEmptySecretsEmpty(t *testing.T) {
	cfg := Default()
	if got := cfg.Masked().Backend.Credentials.SecretAccessKey; got != "" {
		t.Errorf("an unset secret shows as %q; it should stay visibly unset", got)
	}
}

// A new secret field must be tagged so that Masked hides it.
func TestSecretFieldsAreTagged(t *testing.T) {
	var walk func(reflect.Type)
	walk = func(t2 reflect.Type) {
		for i := range t2.NumField() {
			f := t2.Field(i)
			name := yamlName(f)
			looksSecret := strings.Contains(name, "secret") || strings.Contains(name, "password")
			if looksSecret && !strings.HasSuffix(name, "_env") && f.Tag.Get("secret") != "true" {
				t.Errorf("%s.%s looks secret but is not tagged secret:\"true\"", t2.Name(), f.Name)
			}
			switch {
			case f.Type.Kind() == reflect.Struct && f.Type != durationType:
				walk(f.Type)
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem())
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
}

func TestRenderRoundTrips(t *testing.T) {
	env := append(testEnv, "BACKEND_KEY_ID=i", "BACKEND_SECRET=s", "READER_SECRET=r")
	cfg, err := Load("testdata/good/fleet.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "timeout: 30s") || !strings.Contains(string(out), "max_clock_skew_rate: 1.5") {
		t.Errorf("durations or numbers not rendered as written:\n%s", out)
	}
	path := t.TempDir() + "/rendered.yaml"
	writeFile(t, path, out)
	again, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, cfg) {
		t.Errorf("round trip changed the config:\n%+v\n%+v", again, cfg)
	}
}
