package proxy

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// failAtEOF stands for the verifying client body: it yields data, then an
// error instead of io.EOF when a check fails at the end.
type failAtEOF struct {
	r   io.Reader
	err error
}

func (f *failAtEOF) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF && f.err != nil {
		return n, f.err
	}
	return n, err
}

func TestHoldbackPassesEveryByteWhenVerified(t *testing.T) {
	for _, size := range []int{0, 1, 2, 3, 100, 64 << 10} {
		data := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
		for _, wrap := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.HalfReader,
		} {
			gateCalls := 0
			h := newHoldbackReader(wrap(bytes.NewReader(data)), func() error { gateCalls++; return nil })
			got, err := io.ReadAll(h)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("size %d: got %d bytes, err %v", size, len(got), err)
			}
			if gateCalls != 1 {
				t.Fatalf("size %d: gate called %d times, want once", size, gateCalls)
			}
		}
	}
}

func TestHoldbackNeverReleasesLastByteOnVerifyFailure(t *testing.T) {
	data := []byte("hello world")
	bad := errors.New("checksum mismatch")
	h := newHoldbackReader(&failAtEOF{r: bytes.NewReader(data), err: bad}, nil)
	got, err := io.ReadAll(h)
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v, want %v", err, bad)
	}
	if len(got) != len(data)-1 {
		t.Fatalf("released %d bytes, want all but the last (%d)", len(got), len(data)-1)
	}
	if !errors.Is(h.Err(), bad) {
		t.Fatalf("Err() = %v", h.Err())
	}
}

func TestHoldbackGateFailureKeepsLastByte(t *testing.T) {
	data := []byte("conditional body")
	denied := errors.New("precondition failed")
	h := newHoldbackReader(bytes.NewReader(data), func() error { return denied })
	got, err := io.ReadAll(h)
	if !errors.Is(err, denied) || len(got) != len(data)-1 {
		t.Fatalf("got %d bytes, err %v", len(got), err)
	}
}

func TestHoldbackOneByteBuffers(t *testing.T) {
	data := []byte("xyz")
	h := newHoldbackReader(bytes.NewReader(data), nil)
	var out []byte
	buf := make([]byte, 1)
	for {
		n, err := h.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(out) != "xyz" {
		t.Fatalf("got %q", out)
	}
}
