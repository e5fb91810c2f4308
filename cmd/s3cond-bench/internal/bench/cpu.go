package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: Linux reports them
// in USER_HZ clock ticks, 100 per second on every architecture it supports
// (sysconf(_SC_CLK_TCK)), whatever the kernel's own tick rate.
const userHZ = 100

// ProcessCPUTime is the CPU time, user and system, that process pid and all
// its threads have used so far. Linux only; its resolution is 10 ms, so a
// workload's share is meaningful over seconds, not single operations.
//
// Why: on a machine whose cores the client, s3cond and the backend share,
// ratios of throughput mix up all three; CPU time per operation says what
// each process costs, and so what s3cond would serve on cores of its own.
func ProcessCPUTime(pid int) (time.Duration, error) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read CPU time of process %d: %w", pid, err)
	}
	return parseStatCPU(string(raw))
}

// parseStatCPU reads utime and stime (fields 14 and 15) from the text of
// /proc/PID/stat. Field 2, the command name, is in parentheses and may hold
// spaces and parentheses itself, so counting starts after its last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat line without a command name: %.40q", stat)
	}
	fields := strings.Fields(stat[end+1:])
	// fields[0] is field 3 (state), so utime and stime are fields[11] and [12].
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("/proc stat line with %d fields after the command name, want more than %d", len(fields), stime)
	}
	var ticks int64
	for _, field := range []string{fields[utime], fields[stime]} {
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat CPU time %q: %w", field, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
