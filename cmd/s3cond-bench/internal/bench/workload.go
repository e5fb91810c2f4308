package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Workload is one kind of operation the benchmark repeats.
type Workload interface {
	// Name is how flags and reports call it, e.g. "put-4k".
	Name() string
	// Prepare creates what the operations need (objects to read, keys to
	// swap) under t.Prefix before the clock starts.
	Prepare(ctx context.Context, t *Target, workers int) error
	// Do performs one operation for the given worker. Its duration is the
	// latency sample; an error counts as a failed operation.
	Do(ctx context.Context, t *Target, op Op) (Outcome, error)
}

// Op identifies one operation: which worker runs it and how many that worker
// ran before. Stop is closed when the run's deadline passes, so operations
// that loop (hot-cas retries) can give up between attempts.
type Op struct {
	Worker int
	Seq    int
	Stop   <-chan struct{}
}

// Outcome is what one operation did besides taking time.
type Outcome struct {
	Bytes              int64 // payload bytes moved (body of a PUT or GET)
	PreconditionFailed int64 // 412 answers the operation saw and handled
	Conflicts          int64 // 409 ConditionalRequestConflict answers it saw and handled
}

// errStopped ends an operation that was cut short by the run's deadline; it
// is neither a success nor a failure.
var errStopped = errors.New("stopped at the deadline")

// Planned is a workload with the number of workers that should run it.
type Planned struct {
	Workload Workload
	Workers  int
}

// ParseWorkloads turns "get-4k,put-1m:4,hot-cas" into workloads. Each name
// may carry ":N" to override defaultWorkers for that workload.
func ParseWorkloads(spec string, defaultWorkers int) ([]Planned, error) {
	var plan []Planned
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, workersText, hasWorkers := strings.Cut(item, ":")
		workers := defaultWorkers
		if hasWorkers {
			n, err := strconv.Atoi(workersText)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("workload %q: workers must be a positive number", item)
			}
			workers = n
		}
		w, err := NewWorkload(name)
		if err != nil {
			return nil, err
		}
		plan = append(plan, Planned{Workload: w, Workers: workers})
	}
	if len(plan) == 0 {
		return nil, errors.New("no workload given")
	}
	return plan, nil
}

// WorkloadNames lists the names the benchmark knows, for help text. Any
// size works after put- and get- (e.g. put-1g); these are the usual ones.
var WorkloadNames = []string{
	"get-4k", "put-4k", "get-1m", "put-1m", "get-64m", "put-64m",
	"list", "cond-create", "cond-cas", "hot-cas",
}

// smallObjectSize is the body of list, cond-create, cond-cas and hot-cas
// objects: the conditional workloads measure coordination, not transfer.
const smallObjectSize = 4 << 10

// NewWorkload returns the workload called name.
func NewWorkload(name string) (Workload, error) {
	switch name {
	case "list":
		return listWorkload{objects: 100}, nil
	case "cond-create":
		return condCreateWorkload{size: smallObjectSize}, nil
	case "cond-cas":
		return condCASWorkload{size: smallObjectSize}, nil
	case "hot-cas":
		return hotCASWorkload{size: smallObjectSize}, nil
	}
	if sizeText, ok := strings.CutPrefix(name, "put-"); ok {
		size, err := ParseSize(sizeText)
		if err != nil {
			return nil, fmt.Errorf("workload %q: %w", name, err)
		}
		return putWorkload{name: name, size: size}, nil
	}
	if sizeText, ok := strings.CutPrefix(name, "get-"); ok {
		size, err := ParseSize(sizeText)
		if err != nil {
			return nil, fmt.Errorf("workload %q: %w", name, err)
		}
		return getWorkload{name: name, size: size, pool: getPoolSize(size)}, nil
	}
	return nil, fmt.Errorf("unknown workload %q (known: %s, put-SIZE, get-SIZE)", name, strings.Join(WorkloadNames, ", "))
}

// ParseSize reads "4k", "1m", "64m", "1g" or a plain byte count. Units are
// binary (k = 1024).
func ParseSize(original string) (int64, error) {
	text := strings.ToLower(strings.TrimSpace(original))
	multiplier := int64(1)
	for suffix, m := range map[string]int64{"k": 1 << 10, "m": 1 << 20, "g": 1 << 30} {
		if trimmed, ok := strings.CutSuffix(text, suffix); ok {
			text, multiplier = trimmed, m
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number with an optional k, m or g", original)
	}
	return n * multiplier, nil
}

// getPoolSize is how many objects a GET workload pre-uploads: several so
// reads do not all hit one file's cache entry, few for big sizes so the
// preparation stays short.
func getPoolSize(size int64) int {
	switch {
	case size <= 1<<20:
		return 16
	case size <= 64<<20:
		return 4
	default:
		return 1
	}
}
