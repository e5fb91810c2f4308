package linearizability

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Recorder collects a concurrent history. Times are nanoseconds on the
// monotonic clock since the recorder was made, read before a request is
// sent and after its answer arrived, so each recorded interval contains
// the real one.
type Recorder struct {
	start time.Time

	mu  sync.Mutex
	ops []recordedOp
	seq int
}

// nextSeq numbers the values written into this history.
func (r *Recorder) nextSeq() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return r.seq
}

type recordedOp struct {
	client   int
	in       Input
	call     int64
	ret      int64
	out      Output
	returned bool
}

// NewRecorder starts an empty history.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Pending is an invoked operation waiting for its outcome.
type Pending struct {
	r     *Recorder
	index int
}

// Invoke records the call of in by client and returns the handle that
// records its return. An operation never returned counts as ambiguous.
func (r *Recorder) Invoke(client int, in Input) Pending {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, recordedOp{client: client, in: in, call: r.now()})
	return Pending{r: r, index: len(r.ops) - 1}
}

// Return records the outcome. An ambiguous outcome keeps the operation
// open until the end of the history: it may still take effect.
func (p Pending) Return(out Output) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	op := &p.r.ops[p.index]
	op.out, op.returned = out, true
	op.ret = p.r.now()
}

func (r *Recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

// Elapsed is the time since the recorder was made, on its clock.
func (r *Recorder) Elapsed() time.Duration { return time.Since(r.start) }

// answered is every operation answered so far (ambiguous ones too), with
// its interval on the recorder's clock.
func (r *Recorder) answered() []recordedOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recordedOp
	for _, op := range r.ops {
		if op.returned {
			out = append(out, op)
		}
	}
	return out
}

// FirstSuccessfulWrite is when (on the recorder's clock) the first write on
// key answered 2xx returned; false while none has.
func (r *Recorder) FirstSuccessfulWrite(key string) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first, found := int64(0), false
	for _, op := range r.ops {
		if op.returned && op.in.Key == key && op.in.Kind != OpGet && op.out.Outcome == OutcomeOK && (!found || op.ret < first) {
			first, found = op.ret, true
		}
	}
	return time.Duration(first), found
}

// Operations is the history for porcupine. Ambiguous and unreturned
// operations return after everything else ("+infinity").
func (r *Recorder) Operations() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := r.now() + 1
	ops := make([]porcupine.Operation, 0, len(r.ops))
	for _, op := range r.ops {
		out, ret := op.out, op.ret
		if !op.returned {
			out = Output{Outcome: OutcomeAmbiguous}
		}
		if out.Outcome == OutcomeAmbiguous {
			ret = end
		}
		ops = append(ops, porcupine.Operation{ClientId: op.client, Input: op.in, Call: op.call, Output: out, Return: ret})
	}
	return ops
}

// Stats counts the recorded operations by kind and outcome.
type Stats struct {
	Ops      int
	ByKind   map[OpKind]int
	ByResult map[Outcome]int
	// Writes that succeeded (create, CAS, delete, put answered 2xx).
	SuccessfulWrites int
}

func (s Stats) String() string {
	return fmt.Sprintf("%d ops (get %d, create %d, cas %d, delete %d, put %d; ok %d, 412 %d, 404 %d, 409 %d, 503 refused %d, ambiguous %d; %d successful writes)",
		s.Ops, s.ByKind[OpGet], s.ByKind[OpCreate], s.ByKind[OpCAS], s.ByKind[OpDelete], s.ByKind[OpPut],
		s.ByResult[OutcomeOK], s.ByResult[OutcomePreconditionFailed], s.ByResult[OutcomeNotFound],
		s.ByResult[OutcomeConflict], s.ByResult[OutcomeRefused], s.ByResult[OutcomeAmbiguous], s.SuccessfulWrites)
}

// Stats summarises the history so far.
func (r *Recorder) Stats() Stats {
	s := Stats{ByKind: map[OpKind]int{}, ByResult: map[Outcome]int{}}
	for _, op := range r.Operations() {
		in, out := op.Input.(Input), op.Output.(Output)
		s.Ops++
		s.ByKind[in.Kind]++
		s.ByResult[out.Outcome]++
		if in.Kind != OpGet && out.Outcome == OutcomeOK {
			s.SuccessfulWrites++
		}
	}
	return s
}

// checkTimeout bounds porcupine's search; a history it cannot decide in
// time fails the test as unknown rather than passing.
// $S3COND_CHECK_TIMEOUT (a Go duration) overrides it for soak runs.
func checkTimeout(t testing.TB) time.Duration {
	t.Helper()
	if v := os.Getenv("S3COND_CHECK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("S3COND_CHECK_TIMEOUT=%q: %v", v, err)
		}
		return d
	}
	return 60 * time.Second
}

// Check runs porcupine on the history. On a violation it writes porcupine's
// HTML visualisation next to the test's temporary files and names it.
func Check(t testing.TB, r *Recorder) porcupine.CheckResult {
	t.Helper()
	result, info := porcupine.CheckOperationsVerbose(RegisterModel, r.Operations(), checkTimeout(t))
	if result != porcupine.Ok {
		dir := os.Getenv("S3COND_LINEARIZABILITY_OUT")
		if dir == "" {
			dir = os.TempDir()
		}
		path := filepath.Join(dir, fmt.Sprintf("linearizability-%s-%d.html", sanitize(t.Name()), time.Now().UnixNano()))
		if err := porcupine.VisualizePath(RegisterModel, info, path); err != nil {
			t.Logf("write visualisation: %v", err)
		} else {
			t.Logf("porcupine visualisation of the history: %s", path)
		}
	}
	return result
}

// RequireLinearizable fails the test unless the history is linearizable.
func RequireLinearizable(t testing.TB, r *Recorder) {
	t.Helper()
	stats := r.Stats()
	result := Check(t, r)
	t.Logf("checked %s: %s", stats, result)
	if result != porcupine.Ok {
		t.Fatalf("history is not linearizable (porcupine: %s)", result)
	}
}

func sanitize(name string) string {
	out := []rune(name)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			out[i] = '_'
		}
	}
	return string(out)
}
