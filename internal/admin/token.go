package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// TokenFileName is the file in data_dir holding the admin listener's
// release token while s3cond runs.
const TokenFileName = "admin-token"

// tokenBytes is the token's entropy; it is written as hex.
const tokenBytes = 32

// maxTokenFileBytes bounds what reading a token file takes in: a token is
// 64 hex digits and a newline, anything much longer is not one.
const maxTokenFileBytes = 1024

// TokenFile is the token of one s3cond run and the file that holds it.
type TokenFile struct {
	Path  string
	Token string
}

// CreateTokenFile writes a new random token to dir/admin-token, mode 0600,
// replacing any left by an earlier run. The file appears whole or not at
// all (a temporary file renamed over it), so a reader never sees half a
// token. Whoever can read the file can release leases through the admin
// listener: the file's owner (s3cond's user) and root.
func CreateTokenFile(dir string) (*TokenFile, error) {
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate the admin token: %w", err)
	}
	t := &TokenFile{Path: filepath.Join(dir, TokenFileName), Token: hex.EncodeToString(raw)}
	// CreateTemp makes the file 0600, before a byte of the token is in it.
	tmp, err := os.CreateTemp(dir, "."+TokenFileName+"-*")
	if err != nil {
		return nil, fmt.Errorf("create the admin token file in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.WriteString(t.Token + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, fmt.Errorf("write the admin token file %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), t.Path); err != nil {
		return nil, fmt.Errorf("install the admin token file %s: %w", t.Path, err)
	}
	return t, nil
}

// Remove deletes the token file if it still holds t's token: another
// s3cond started on the same data_dir since has replaced it with its own,
// which must stay.
func (t *TokenFile) Remove() error {
	current, err := ReadTokenFile(t.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case current != t.Token:
		return nil
	}
	if err := os.Remove(t.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the admin token file: %w", err)
	}
	return nil
}

// ReadTokenFile returns the token in the file at path.
func ReadTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read the admin token: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("read the admin token %s: %w", path, err)
	}
	token := string(bytes.TrimSpace(raw))
	if len(raw) > maxTokenFileBytes || token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("%s holds no admin token", path)
	}
	return token, nil
}
