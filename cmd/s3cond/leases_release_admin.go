package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
)

// maxReleaseAnswerBytes bounds reading a release answer: one row.
const maxReleaseAnswerBytes = 64 << 10

// adminTokenPath is where release reads the running s3cond's token:
// --admin-token-file, or the token file in the config's data_dir.
func adminTokenPath(f leasesFlags, cfg *config.Config) string {
	if f.adminTokenFile != "" {
		return f.adminTokenFile
	}
	return filepath.Join(cfg.DataDir, admin.TokenFileName)
}

// releaseOfRunning releases through the admin listener of cfg, for rows
// only a running s3cond can write; why says so in errors.
func releaseOfRunning(ctx context.Context, f leasesFlags, cfg *config.Config, why string) (*dynamolease.Record, error) {
	if cfg.Admin.Listen == "" {
		return nil, fmt.Errorf("%s, and admin.listen is off: pass --admin URL of its admin listener, or stop s3cond "+
			"(a graceful stop releases every lease it holds) and release then", why)
	}
	row, err := releaseThroughAdmin(ctx, cfg.Admin.Listen, adminTokenPath(f, cfg), f)
	if err != nil {
		return row, fmt.Errorf("%s; releasing through its admin listener: %w", why, err)
	}
	return row, nil
}

// readAdminToken reads the running s3cond's admin token, saying what to do
// when it cannot.
func readAdminToken(tokenFile string) (string, error) {
	token, err := admin.ReadTokenFile(tokenFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w (no s3cond with an admin listener runs on that data_dir, or it predates the admin "+
			"token; --admin-token-file names another)", err)
	case err != nil:
		return "", fmt.Errorf("%w: run as the s3cond user or root, who alone can read the admin token", err)
	}
	return token, nil
}

// adminRefusal is a release the admin listener refused: its message, and
// the dynamolease error it stands for, for errors.Is and releaseError.
type adminRefusal struct {
	message string
	kind    error
}

func (e adminRefusal) Error() string { return e.message }
func (e adminRefusal) Unwrap() error { return e.kind }

// releaseThroughAdmin asks the s3cond whose admin listener is at base to
// release f's row, presenting the token in tokenFile. It returns the row
// as released, or as it now is when refused because it moved on.
func releaseThroughAdmin(ctx context.Context, base, tokenFile string, f leasesFlags) (*dynamolease.Record, error) {
	token, err := readAdminToken(tokenFile)
	if err != nil {
		return nil, err
	}
	u, err := adminURL(base, admin.LeaseReleasePath)
	if err != nil {
		return nil, err
	}
	u.RawQuery = url.Values{"path": {f.path}, "etag": {f.etag}, "generation": {fmt.Sprint(f.generation)}}.Encode()
	ctx, cancel := context.WithTimeout(ctx, adminCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	where := "POST " + u.Scheme + "://" + u.Host + admin.LeaseReleasePath
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReleaseAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var answer admin.LeaseReleaseAnswer
	if err := json.Unmarshal(body, &answer); err != nil {
		// Not the release endpoint's answer: the mux's 404 of an s3cond
		// that does not serve it.
		return nil, fmt.Errorf("%s: %s: %s (an s3cond older than release through the admin listener, or one on a "+
			"shared lease store, answers 404: release those through the store with --config)",
			where, resp.Status, strings.TrimSpace(string(body)))
	}
	var row *dynamolease.Record
	if answer.Row != nil {
		rec := answer.Row.Record()
		row = &rec
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if row == nil {
			return nil, fmt.Errorf("%s: an answer without the row", where)
		}
		return row, nil
	case http.StatusConflict:
		return row, adminRefusal{message: answer.Error, kind: dynamolease.ErrReleaseGeneration}
	case http.StatusNotFound:
		return nil, adminRefusal{message: answer.Error, kind: dynamolease.ErrNoLeaseRow}
	case http.StatusUnauthorized:
		return nil, fmt.Errorf("%s: %s: the token in %s is not the running s3cond's (left by an earlier run, "+
			"or the listener belongs to an s3cond on another data_dir)", where, resp.Status, tokenFile)
	}
	return nil, fmt.Errorf("%s: %s: %s", where, resp.Status, answer.Error)
}
