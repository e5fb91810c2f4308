package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ResetPeakRSS resets the peak resident set size (VmHWM) of process pid, so
// the next PeakRSS reading covers only what ran in between. Linux only; it
// needs to own the process or be root.
func ResetPeakRSS(pid int) error {
	// "5" is the clear_refs command that resets the peak RSS (Linux 4.0+).
	path := fmt.Sprintf("/proc/%d/clear_refs", pid)
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak RSS of process %d: %w", pid, err)
	}
	return nil
}

// PeakRSS reads the peak resident set size (VmHWM) of process pid in bytes.
func PeakRSS(pid int) (int64, error) {
	return readStatusKiB(pid, "VmHWM:")
}

// CurrentRSS reads the resident set size (VmRSS) of process pid in bytes.
func CurrentRSS(pid int) (int64, error) {
	return readStatusKiB(pid, "VmRSS:")
}

func readStatusKiB(pid int, field string) (int64, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		rest, ok := strings.CutPrefix(scanner.Text(), field)
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", path, field, err)
		}
		return kib << 10, nil
	}
	if err := scanner.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return 0, fmt.Errorf("%s has no %s line", path, field)
}
