package pattern

import (
	"bytes"
	"io"
	"testing"
)

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return data
}

func TestPatternReaderIsDeterministicAndExactLength(t *testing.T) {
	const size = 3*patternLength + 123 // crosses the pattern's wrap-around
	a := readAll(t, New(42, size))
	b := readAll(t, New(42, size))
	if len(a) != size {
		t.Fatalf("length %d, want %d", len(a), size)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("same seed gave different content")
	}
}

func TestPatternReaderSeedsGiveDifferentContent(t *testing.T) {
	a := readAll(t, New(1, 4096))
	b := readAll(t, New(2, 4096))
	if bytes.Equal(a, b) {
		t.Fatal("seeds 1 and 2 gave the same content")
	}
	if a[0] == b[0] && a[1] == b[1] && a[2] == b[2] {
		t.Error("seeds 1 and 2 start with the same bytes; consecutive seeds should differ at once")
	}
}

func TestPatternReaderContentIsNotTrivial(t *testing.T) {
	data := readAll(t, New(7, 1<<16))
	distinct := map[byte]bool{}
	for _, c := range data {
		distinct[c] = true
	}
	if len(distinct) < 250 {
		t.Fatalf("only %d distinct byte values in 64 KiB; want near-random content", len(distinct))
	}
}

func TestPatternReaderSmallReadsMatchOneBigRead(t *testing.T) {
	const size = patternLength + 1000
	want := readAll(t, New(9, size))
	r := New(9, size)
	var got []byte
	buf := make([]byte, 7)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatal("7-byte reads differ from one big read")
	}
}

func TestPatternReaderSeek(t *testing.T) {
	const size = 2*patternLength + 10
	full := readAll(t, New(5, size))
	r := New(5, size)

	if pos, err := r.Seek(70000, io.SeekStart); err != nil || pos != 70000 {
		t.Fatalf("seek start: %d, %v", pos, err)
	}
	part := make([]byte, 100)
	if _, err := io.ReadFull(r, part); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(part, full[70000:70100]) {
		t.Error("content after SeekStart differs from the full read")
	}
	if pos, _ := r.Seek(-50, io.SeekCurrent); pos != 70050 {
		t.Errorf("seek current: at %d, want 70050", pos)
	}
	if pos, _ := r.Seek(-10, io.SeekEnd); pos != size-10 {
		t.Errorf("seek end: at %d, want %d", pos, size-10)
	}
	if rest := readAll(t, r); !bytes.Equal(rest, full[size-10:]) {
		t.Error("tail after SeekEnd differs from the full read")
	}
	if _, err := r.Seek(-1, io.SeekStart); err == nil {
		t.Error("seek before the start: want an error")
	}
	// Rewinding after EOF is what an SDK does to resend a body.
	r.Seek(0, io.SeekStart)
	if again := readAll(t, r); !bytes.Equal(again, full) {
		t.Error("content after rewinding differs")
	}
}

func TestPatternReaderEmpty(t *testing.T) {
	r := New(1, 0)
	if n, err := r.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("empty reader: %d, %v; want 0, EOF", n, err)
	}
}

func TestReadAtMatchesTheStream(t *testing.T) {
	const size = 200_000
	whole := readAll(t, New(3, size))
	part := make([]byte, 1000)
	n, err := New(3, size).ReadAt(part, size-1000)
	if n != 1000 || (err != nil && err != io.EOF) || !bytes.Equal(part, whole[size-1000:]) {
		t.Fatalf("ReadAt at the end: n=%d err=%v equal=%v", n, err, bytes.Equal(part, whole[size-1000:]))
	}
	if n, err := New(3, size).ReadAt(make([]byte, 10), size-5); n != 5 || err != io.EOF {
		t.Fatalf("ReadAt past the end: n=%d err=%v, want 5, EOF", n, err)
	}
	if !bytes.Equal(Bytes(3, 5000), whole[:5000]) {
		t.Fatal("Bytes differs from the stream")
	}
}
