package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary files to Load. Whatever it accepts must validate,
// render, and load back to the same rendering; whatever it rejects must be
// rejected with one line starting "config: ".
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/good/*.yaml", "testdata/bad/*.yaml", "../../config.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, testEnv)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one config line: %q", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load returned a config that does not validate: %v", err)
		}
		rendered, err := Render(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, rendered, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := Load(path, testEnv)
		if err != nil {
			t.Fatalf("rendered config does not load: %v\n%s", err, rendered)
		}
		if second, _ := Render(again); string(second) != string(rendered) {
			t.Fatalf("render/load is not stable:\n%s\n---\n%s", rendered, second)
		}
	})
}
