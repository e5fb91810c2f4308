package admin

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTokenFileIsPrivateReplacedAndRemoved(t *testing.T) {
	dir := t.TempDir()
	first, err := CreateTokenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := hex.DecodeString(first.Token); err != nil || len(raw) < 32 {
		t.Fatalf("token %q is not 32 random bytes in hex: %v", first.Token, err)
	}
	info, err := os.Stat(first.Path)
	if err != nil || info.Mode().Perm() != 0o600 || first.Path != filepath.Join(dir, TokenFileName) {
		t.Fatalf("token file %s: %v, %v; want mode 0600 in data_dir", first.Path, info.Mode(), err)
	}
	if got, err := ReadTokenFile(first.Path); err != nil || got != first.Token {
		t.Fatalf("ReadTokenFile: %q, %v", got, err)
	}

	// The next start replaces it; the earlier run's removal leaves the new one.
	second, err := CreateTokenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token == first.Token {
		t.Fatal("two starts got the same token")
	}
	if err := first.Remove(); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTokenFile(second.Path); err != nil || got != second.Token {
		t.Fatalf("an older run's removal took the new token: %q, %v", got, err)
	}
	if err := second.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(second.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("token file after a clean shutdown: %v, want it gone", err)
	}
	if err := second.Remove(); err != nil {
		t.Fatalf("removing it twice: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left in data_dir: %v", entries)
	}

	for name, content := range map[string]string{"empty": "\n", "spaced": "a b\n", "huge": string(make([]byte, 2000))} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTokenFile(path); err == nil {
			t.Errorf("%s token file read as a token", name)
		}
	}
}
