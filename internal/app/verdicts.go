package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/s3cond/s3cond/internal/probe"
)

// storedVerdict is a probe's verdict on a store as kept in data_dir: a
// restart against the same store (endpoint, probe bucket, Server header,
// version) reuses it instead of probing again.
type storedVerdict struct {
	Backend  string         `json:"backend"`
	Store    probe.Identity `json:"store"`
	ProbedAt time.Time      `json:"probed_at"`
	Report   probe.Report   `json:"report"`
}

// maxVerdictFile bounds what is read of a verdict file: a report is a few KiB.
const maxVerdictFile = 1 << 20

// verdictPath is where backend's verdict is kept, or "" without a data_dir.
func verdictPath(dataDir, backend string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, "probe-verdicts", url.PathEscape(backend)+".json")
}

// loadVerdict reads the verdict kept at path; found is false when there is
// none. A file that cannot be read or decoded is an error: the caller
// probes again.
func loadVerdict(path string) (v storedVerdict, found bool, err error) {
	if path == "" {
		return v, false, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, false, nil
	}
	if err != nil {
		return v, false, fmt.Errorf("open the kept probe verdict: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxVerdictFile+1))
	if err != nil {
		return v, false, fmt.Errorf("read %s: %w", path, err)
	}
	if len(raw) > maxVerdictFile {
		return v, false, fmt.Errorf("%s is over %d bytes", path, maxVerdictFile)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false, fmt.Errorf("decode %s: %w", path, err)
	}
	return v, true, nil
}

// saveVerdict writes v at path atomically (a temporary file renamed), so
// a crash mid-write leaves the old verdict or none, never half of one.
func saveVerdict(path string, v storedVerdict) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create the probe verdict directory: %w", err)
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the probe verdict: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".verdict-*")
	if err != nil {
		return fmt.Errorf("write the probe verdict: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removes a failed write
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("keep the probe verdict: %w", err)
	}
	return nil
}

// measured reports whether every capability of rep was measured: a report
// with an error verdict (a store down, a bound run out) is not kept, so
// the next start measures again instead of leasing on it for good.
func measured(rep probe.Report) bool {
	for _, r := range rep.Capabilities {
		if r.Verdict == probe.Error {
			return false
		}
	}
	return len(rep.Capabilities) > 0
}
