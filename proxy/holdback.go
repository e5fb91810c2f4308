package proxy

import (
	"io"
	"sync"
)

// holdbackReader is the body s3cond sends to the backend. It passes on all
// but the final byte of src and releases that byte only after src ended
// cleanly (the verifying body returns io.EOF only when every signature and
// checksum passed) and gate, if set, allowed it (the lease is held and the
// precondition re-checked). If either fails, the byte is never sent: the
// backend sees a body shorter than its Content-Length, the HTTP client aborts
// the request, and the backend stores nothing (SPEC §4).
type holdbackReader struct {
	src  io.Reader
	gate func() error

	mu       sync.Mutex
	pending  byte
	held     bool
	srcDone  bool
	released bool
	err      error
	// complete is released, for other goroutines (under mu).
	complete bool
}

func newHoldbackReader(src io.Reader, gate func() error) *holdbackReader {
	return &holdbackReader{src: src, gate: gate}
}

// Complete reports whether the whole body was read and verified and its
// final byte released: nothing more will be read from src.
func (h *holdbackReader) Complete() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.complete
}

// Err is the failure that stopped the body (verification, gate), if any.
func (h *holdbackReader) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *holdbackReader) fail(err error) (int, error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
	return 0, err
}

func (h *holdbackReader) Read(p []byte) (int, error) {
	if err := h.Err(); err != nil {
		return 0, err
	}
	if h.released {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if h.srcDone {
			return h.release(p)
		}
		n := 0
		if h.held {
			p[0] = h.pending
			n = 1
		}
		var m int
		var err error
		if len(p) > n {
			m, err = h.src.Read(p[n:])
		} else {
			// p has room only for the byte already held: peek one more so we
			// know whether the held byte is the last.
			var one [1]byte
			m, err = h.src.Read(one[:])
			if m == 1 {
				h.pending = one[0]
				return 1, nil // p[0] is the previously held byte; the new one is held
			}
		}
		n += m
		if err == io.EOF {
			h.srcDone = true
		} else if err != nil {
			return h.fail(err)
		}
		if n == 0 {
			continue
		}
		h.pending, h.held = p[n-1], true
		if n-1 > 0 {
			return n - 1, nil
		}
	}
}

// release runs the gate once the source is verified, then hands over the
// held byte; the next Read returns io.EOF.
func (h *holdbackReader) release(p []byte) (int, error) {
	if h.gate != nil {
		gate := h.gate
		h.gate = nil
		if err := gate(); err != nil {
			return h.fail(err)
		}
	}
	h.released = true
	h.mu.Lock()
	h.complete = true
	h.mu.Unlock()
	if !h.held {
		return 0, io.EOF
	}
	h.held = false
	p[0] = h.pending
	return 1, nil
}
