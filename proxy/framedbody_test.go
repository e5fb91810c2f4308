package proxy

import (
	"net/http"
	"path"
	"sync"

	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/sigv4"
)

// parseFramed decodes an aws-chunked stream with one trailer, as a store
// reads it: the payload, the trailer's CRC64NVME, and whether the stream ended
// with its final chunk and the closing CRLF.
func parseFramed(t *testing.T, stream []byte) (payload []byte, crc uint64, finished bool) {
	t.Helper()
	rest := stream
	for {
		line, after, ok := bytes.Cut(rest, []byte("\r\n"))
		if !ok {
			return payload, 0, false
		}
		size, err := strconv.ParseInt(string(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk header %q: %v", line, err)
		}
		rest = after
		if size == 0 {
			break
		}
		if int64(len(rest)) < size+2 {
			return append(payload, rest...), 0, false
		}
		payload = append(payload, rest[:size]...)
		rest = rest[size+2:]
	}
	trailer, after, ok := bytes.Cut(rest, []byte("\r\n"))
	if !ok {
		return payload, 0, false
	}
	value, found := strings.CutPrefix(string(trailer), framedTrailer+":")
	if !found {
		t.Fatalf("trailer %q", trailer)
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(raw) != 8 {
		t.Fatalf("trailer value %q: %v", value, err)
	}
	return payload, binary.BigEndian.Uint64(raw), string(after) == "\r\n"
}

func crc64NVME(payload []byte) uint64 {
	crc := sigv4.NewCRC64NVME()
	crc.Write(payload)
	return crc.Sum64()
}

func TestFramedBodyCarriesPayloadAndItsCRC32(t *testing.T) {
	for _, size := range []int{1, 100, trailerChunkSize, trailerChunkSize + 1, 3*trailerChunkSize + 7} {
		payload := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
		gated := 0
		stream, err := io.ReadAll(newFramedBody(bytes.NewReader(payload), int64(size), func() error { gated++; return nil }))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if int64(len(stream)) != framedLength(int64(size)) {
			t.Fatalf("size %d: stream of %d bytes, framedLength says %d", size, len(stream), framedLength(int64(size)))
		}
		got, crc, finished := parseFramed(t, stream)
		if !bytes.Equal(got, payload) || crc != crc64NVME(payload) || !finished || gated != 1 {
			t.Fatalf("size %d: payload equal %v, crc %08x want %08x, finished %v, gate ran %d times",
				size, bytes.Equal(got, payload), crc, crc64NVME(payload), finished, gated)
		}
	}
}

// A refused gate (lost lease, failed re-check) and a body refused at its
// end (a signed SHA-256 that does not match) both get a wrong CRC32, and
// the reader then fails, so the hold-back never releases the closing byte.
func TestFramedBodyRefusedAtItsEndHasWrongCRC32(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 2*trailerChunkSize+5)
	refused := errors.New("precondition failed")
	cases := map[string]struct {
		src  io.Reader
		gate func() error
	}{
		"gate":   {bytes.NewReader(payload), func() error { return refused }},
		"source": {io.MultiReader(bytes.NewReader(payload), failingReader{refused}), nil},
	}
	for name, tc := range cases {
		hb := newHoldbackReader(newFramedBody(tc.src, int64(len(payload)), tc.gate), nil)
		stream, err := io.ReadAll(hb)
		if !errors.Is(err, refused) {
			t.Fatalf("%s: read error %v, want %v", name, err, refused)
		}
		got, crc, finished := parseFramed(t, append(stream, '\n'))
		if !bytes.Equal(got, payload) || crc == crc64NVME(payload) {
			t.Fatalf("%s: the trailer carries the true CRC32 of a refused body", name)
		}
		if !finished || int64(len(stream)) != framedLength(int64(len(payload)))-1 {
			t.Fatalf("%s: %d bytes sent, want all but the last of %d", name, len(stream), framedLength(int64(len(payload))))
		}
	}
}

// A body that breaks off mid-way reaches the store without a final chunk.
func TestFramedBodyBrokenOffHasNoFinalChunk(t *testing.T) {
	payload := bytes.Repeat([]byte("y"), trailerChunkSize+10)
	broken := errors.New("client hung up")
	src := io.MultiReader(bytes.NewReader(payload[:trailerChunkSize+3]), failingReader{broken})
	gated := false
	stream, err := io.ReadAll(newHoldbackReader(newFramedBody(src, int64(len(payload)), func() error { gated = true; return nil }), nil))
	if !errors.Is(err, broken) || gated {
		t.Fatalf("read error %v (want %v), gate ran %v", err, broken, gated)
	}
	if bytes.Contains(stream, []byte("\r\n0\r\n")) || bytes.Contains(stream, []byte(framedTrailer)) {
		t.Fatalf("a broken-off body was sent with a final chunk or trailer")
	}
}

// A source shorter than its declared length never ends the stream.
// A source that returns its last bytes together with io.EOF (as readers
// may: testing/iotest.DataErrReader) is whole, not short: the stream is
// framed and finished. A framed PUT whose client body ended so was
// answered 400 IncompleteBody, its stream broken off at the store.
func TestFramedBodySourceEndingWithItsLastBytes(t *testing.T) {
	for _, size := range []int{1, trailerChunkSize, 2*trailerChunkSize + 3} {
		payload := bytes.Repeat([]byte("z"), size)
		stream, err := io.ReadAll(newFramedBody(iotest.DataErrReader(bytes.NewReader(payload)), int64(size), nil))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if got, crc, finished := parseFramed(t, stream); !bytes.Equal(got, payload) || crc != crc64NVME(payload) || !finished {
			t.Fatalf("size %d: payload equal %v, finished %v", size, bytes.Equal(got, payload), finished)
		}
	}
}

func TestFramedBodyShortSourceIsIncomplete(t *testing.T) {
	_, err := io.ReadAll(newFramedBody(strings.NewReader("short"), 10, nil))
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read error %v, want an incomplete body", err)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// With framing on, every PutObject, leased or not (issue 33: only leased
// ones were, and an unconditional body failing its SHA-256 was stored
// through a FIN hop), reaches the backend as an unsigned aws-chunked stream
// with a CRC32 trailer. gofakes3 does not read such streams; the hook decodes
// and checks them in front of it, as versitygw does (the e2e FIN-hop tests
// run the real thing).
func TestPutIsFramedWhenTheBackendReadsIt(t *testing.T) {
	encodings := map[string]string{}
	var mu sync.Mutex
	f := newFixtureWith(t, fixtureOptions{framedBodies: true, backendHook: func(r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path == "/"+bucketName {
			return
		}
		mu.Lock()
		encodings[path.Base(r.URL.Path)] = r.Header.Get("Content-Encoding") + " " + r.Header.Get("X-Amz-Trailer")
		mu.Unlock()
		if r.Header.Get("Content-Encoding") != "aws-chunked" {
			return
		}
		stream, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read the framed body: %v", err)
			return
		}
		payload, crc, finished := parseFramed(t, stream)
		if !finished || crc != crc64NVME(payload) || int64(len(payload)) != mustInt(t, r.Header.Get("X-Amz-Decoded-Content-Length")) {
			t.Errorf("framed body: finished %v, CRC32 right %v, %d payload bytes", finished, crc == crc64NVME(payload), len(payload))
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(payload)), int64(len(payload))
		r.Header.Del("Content-Encoding")
		r.Header.Set("Content-Length", strconv.Itoa(len(payload)))
	}})
	large := strings.Repeat("z", maxBufferedBody+trailerChunkSize+3)
	for key, body := range map[string]string{"small": "small body", "large": large} {
		if _, err := f.put(t, key, body, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
			t.Fatalf("conditional PUT %s: %v", key, err)
		}
		if got, err := f.get(t, key); err != nil || got != body {
			t.Fatalf("GET %s: %d bytes, %v; want the %d written", key, len(got), err, len(body))
		}
	}
	if _, err := f.put(t, "plain", "plain body", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := f.get(t, "plain"); err != nil || got != "plain body" {
		t.Fatalf("GET plain: %q, %v", got, err)
	}
	// A client's own encoding steps the framing back: a store may keep
	// "aws-chunked,gzip" as the object's Content-Encoding, S3 keeps "gzip".
	if _, err := f.put(t, "gzipped", "gzip body", func(in *s3.PutObjectInput) { in.ContentEncoding = aws.String("gzip") }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "aws-chunked " + framedTrailer
	if encodings["small"] != want || encodings["large"] != want || encodings["plain"] != want {
		t.Fatalf("backend saw encodings %q; want %q for every PUT", encodings, want)
	}
	if encodings["gzipped"] != "gzip " {
		t.Fatalf("backend saw %q for a gzip PUT; want it unframed (\"gzip \")", encodings["gzipped"])
	}
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Errorf("parse %q: %v", s, err)
	}
	return n
}

// An unconditional PUT whose body fails its signed SHA-256 reaches a
// framing backend with a wrong CRC32 or no final chunk, never as a finished
// stream with the true CRC32, which a store behind a FIN-closing hop would
// keep (issue 33: 10 of 20 stored).
func TestUnconditionalTamperedPutIsNeverAFinishedFrame(t *testing.T) {
	var mu sync.Mutex
	var framed, acceptable int
	// The store reads on after s3cond answered the client: the test waits
	// for it to have read the request.
	read := make(chan struct{}, 1)
	f := newFixtureWith(t, fixtureOptions{framedBodies: true, backendHook: func(r *http.Request) {
		if r.Method != http.MethodPut || path.Base(r.URL.Path) != "tampered" {
			return
		}
		stream, _ := io.ReadAll(r.Body) // cut short by s3cond's reset, or whole
		defer func() { read <- struct{}{} }()
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Content-Encoding") != "aws-chunked" {
			return // the client's bytes: what the old default sent
		}
		framed++
		if payload, crc, finished := parseFramed(t, stream); finished && crc == crc64NVME(payload) {
			t.Errorf("the store got a finished frame with the true CRC32 of a body that failed its SHA-256")
		} else {
			acceptable++
		}
		r.Body = io.NopCloser(bytes.NewReader(nil))
	}})
	large := strings.Repeat("t", maxBufferedBody+trailerChunkSize+3)
	resp := signedRawPut(t, f.proxyURL, "tampered", []byte(large[1:]+"!"), []byte(large), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("tampered PUT: %d, want 400", resp.StatusCode)
	}
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the store never read the tampered PUT")
	}
	mu.Lock()
	defer mu.Unlock()
	if framed != 1 || acceptable != 1 {
		t.Fatalf("the store saw %d framed requests, %d of them refusable; want 1 and 1", framed, acceptable)
	}
}

// newFramedBody frames length verified bytes of src in an allocation of
// its own (forward.go embeds it in the outbound body).
func newFramedBody(src io.Reader, length int64, gate func() error) *framedBody {
	f := new(framedBody)
	initFramedBody(f, src, length, gate)
	return f
}
