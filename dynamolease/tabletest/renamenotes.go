package tabletest

import (
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// testRenameNotes: RenameObject's intents and client tokens
// (dynamolease/renamenotes.go) are rows of their own whose text rides in
// key_state; every store keeps that text byte for byte (JSON with quotes,
// spaces and a key with a slash), clears it, and keeps a token row once.
// A table whose rows carry no key states refuses them.
func testRenameNotes(t *testing.T, tbl dynamolease.Table, path string) {
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	const intent = `{"bucket":"b","source":"dir/a b","destination":"c","source_etag":"\"9b2c\"","stage":"copying"}`
	err := c.PutRenameIntent(ctx(t), path, intent)
	if !carriesKeyStates(t, tbl, path) {
		if !errors.Is(err, dynamolease.ErrKeyStatesUnsupported) {
			t.Fatalf("an intent on a table without key states: %v, want ErrKeyStatesUnsupported", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("record an intent: %v", err)
	}
	requireIntent(t, c, path, intent)
	moved := intent[:len(intent)-1] + `,"copy_etag":"\"9b2c\""}`
	if err := c.PutRenameIntent(ctx(t), path, moved); err != nil {
		t.Fatalf("replace the intent: %v", err)
	}
	requireIntent(t, c, path, moved)
	if err := c.PutRenameIntent(ctx(t), path, ""); err != nil {
		t.Fatalf("clear the intent: %v", err)
	}
	requireIntent(t, c, path, "")

	tokenPath := "#rename-token/" + path
	if _, found, err := c.RenameToken(ctx(t), tokenPath); err != nil || found {
		t.Fatalf("an unwritten token: found %v, %v", found, err)
	}
	if err := c.PutRenameToken(ctx(t), tokenPath, "digest-1", time.Minute); err != nil {
		t.Fatalf("write a token: %v", err)
	}
	if err := c.PutRenameToken(ctx(t), tokenPath, "digest-2", time.Minute); !errors.Is(err, dynamolease.ErrNoteTaken) {
		t.Fatalf("a second token write: %v, want ErrNoteTaken", err)
	}
	if text, found, err := c.RenameToken(ctx(t), tokenPath); err != nil || !found || text != "digest-1" {
		t.Fatalf("read the token: %q %v %v, want digest-1", text, found, err)
	}
}

func requireIntent(t *testing.T, c *dynamolease.Committer, path, want string) {
	t.Helper()
	got, err := c.RenameIntent(ctx(t), path)
	if err != nil || got != want {
		t.Fatalf("intent read back %q (%v), want %q", got, err, want)
	}
}
