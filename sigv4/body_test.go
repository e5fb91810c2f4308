package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func sha256Body(t testing.TB, payload []byte, claimedHex string, contentLength int64) *Body {
	t.Helper()
	body, err := NewBody(bytes.NewReader(payload), BodySpec{Mode: PayloadSHA256, PayloadSHA256: claimedHex, ContentLength: contentLength})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestPayloadSHA256(t *testing.T) {
	payload := []byte("the quick brown fox")
	digest := sha256Hex(payload)

	body := sha256Body(t, payload, strings.ToUpper(digest), int64(len(payload)))
	if body.PayloadSHA256() != digest {
		t.Fatalf("PayloadSHA256() = %q, want lower-case %q", body.PayloadSHA256(), digest)
	}
	if body.Length() != int64(len(payload)) {
		t.Fatalf("Length() = %d", body.Length())
	}
	if got, err := readBody(t, body, 4); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("good payload: %q, %v", got, err)
	}

	other := sha256Hex([]byte("something else"))
	got, err := readBody(t, sha256Body(t, payload, other, int64(len(payload))), 4)
	e := requireCode(t, err, s3err.XAmzContentSHA256Mismatch)
	if !bytes.Equal(got, payload) {
		t.Fatal("data should be delivered; only the end is withheld")
	}
	want := []s3err.Field{{Name: "ClientComputedContentSHA256", Value: other}, {Name: "S3ComputedContentSHA256", Value: digest}}
	if len(e.Extra) != 2 || e.Extra[0] != want[0] || e.Extra[1] != want[1] {
		t.Fatalf("extra fields %v", e.Extra)
	}
}

func TestMalformedPayloadSHA256(t *testing.T) {
	for _, claimed := range []string{"", "abc", strings.Repeat("g", 64), strings.Repeat("a", 66)} {
		_, err := NewBody(strings.NewReader(""), BodySpec{Mode: PayloadSHA256, PayloadSHA256: claimed})
		requireCode(t, err, s3err.InvalidArgument)
	}
}

// TestZeroLengthBodiesVerifyOnFirstRead: the first Read returns io.EOF or the error.
func TestZeroLengthBodiesVerifyOnFirstRead(t *testing.T) {
	cases := []struct {
		name string
		body func() *Body
		want error
	}{
		{"unsigned", func() *Body { b, _ := unsignedBody(t, nil, nil); return b }, io.EOF},
		{"sha256 of empty", func() *Body { return sha256Body(t, nil, EmptyPayloadHash, 0) }, io.EOF},
		{"wrong sha256", func() *Body { return sha256Body(t, nil, sha256Hex([]byte("x")), 0) }, s3err.New(s3err.XAmzContentSHA256Mismatch)},
		{"wrong crc32", func() *Body {
			b, _ := unsignedBody(t, nil, http.Header{"X-Amz-Checksum-Crc32": {crc32Base64([]byte("x"))}})
			return b
		}, s3err.New(s3err.BadDigest)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.body().Read(make([]byte, 8))
			if n != 0 {
				t.Fatalf("read %d bytes", n)
			}
			if want, ok := tc.want.(*s3err.Error); ok {
				requireCode(t, err, want.Code)
			} else if err != tc.want {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// disconnectingReader stands for net/http's request body when the client
// disconnects early: it returns io.ErrUnexpectedEOF after its data.
type disconnectingReader struct{ r io.Reader }

func (s disconnectingReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func TestContentLengthIsExact(t *testing.T) {
	payload := []byte("0123456789")
	cases := []struct {
		name          string
		reader        io.Reader
		contentLength int64
		want          s3err.Code
		delivered     int
	}{
		{"exact", bytes.NewReader(payload), 10, "", 10},
		{"unknown length", bytes.NewReader(payload), -1, "", 10},
		{"shorter than Content-Length", bytes.NewReader(payload), 11, s3err.IncompleteBody, 10},
		{"longer than Content-Length", bytes.NewReader(payload), 9, s3err.IncompleteBody, 9},
		{"client disconnect", disconnectingReader{bytes.NewReader(payload[:4])}, 10, s3err.IncompleteBody, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := NewBody(tc.reader, BodySpec{Mode: PayloadUnsigned, ContentLength: tc.contentLength})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(t, body, 3)
			if len(got) != tc.delivered {
				t.Fatalf("delivered %d bytes, want %d", len(got), tc.delivered)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			requireCode(t, err, tc.want)
		})
	}
}

// TestFailuresNeverEndWithEOF drives every kind of failing body byte by
// byte, as the proxy's hold-back writer does, and checks that no Read ever
// reports io.EOF: the held-back bytes are therefore never released.
func TestFailuresNeverEndWithEOF(t *testing.T) {
	payload := []byte("payload that will not verify")
	signing := exampleSigning(t)
	badSigned := encodeStream(payload, streamOptions{chunkSize: minChunkSize, signer: newTestChunkSigner(signing)})
	badSigned[bytes.LastIndex(badSigned, []byte("chunk-signature="))+20] ^= 1 // final chunk's signature
	makers := map[string]func() (*Body, error){
		"sha256": func() (*Body, error) {
			return NewBody(bytes.NewReader(payload), BodySpec{Mode: PayloadSHA256, PayloadSHA256: EmptyPayloadHash, ContentLength: int64(len(payload))})
		},
		"content-md5": func() (*Body, error) {
			return unsignedBody(t, payload, http.Header{"Content-Md5": {"XrY7u+Ae7tCTyyK7j1rNww=="}})
		},
		"final chunk signature": func() (*Body, error) {
			return NewBody(bytes.NewReader(badSigned), BodySpec{Mode: PayloadStreamingSigned, ContentLength: int64(len(badSigned)),
				Header: streamingHeader(len(payload), ""), Chunk: signing})
		},
	}
	for name, makeBody := range makers {
		t.Run(name, func(t *testing.T) {
			body, err := makeBody()
			if err != nil {
				t.Fatal(err)
			}
			var one [1]byte
			for i := 0; i < 10*len(payload)+100; i++ {
				_, err := body.Read(one[:])
				if err == io.EOF {
					t.Fatal("failing body reported io.EOF")
				}
				var e *s3err.Error
				if errors.As(err, &e) {
					return
				}
				if err != nil {
					t.Fatalf("non-S3 error %v", err)
				}
			}
			t.Fatal("body never ended")
		})
	}
}

func TestStreamingHeaderProblems(t *testing.T) {
	cases := []struct {
		name   string
		mode   PayloadMode
		header http.Header
		chunk  *ChunkSigning
		want   s3err.Code
	}{
		{"missing decoded length", PayloadStreamingUnsignedTrailer, http.Header{}, nil, s3err.MissingContentLength},
		{"negative decoded length", PayloadStreamingUnsignedTrailer, http.Header{"X-Amz-Decoded-Content-Length": {"-1"}}, nil, s3err.MissingContentLength},
		{"non-numeric decoded length", PayloadStreamingUnsignedTrailer, http.Header{"X-Amz-Decoded-Content-Length": {"ten"}}, nil, s3err.MissingContentLength},
		{"signed without chunk signing", PayloadStreamingSigned, http.Header{"X-Amz-Decoded-Content-Length": {"1"}}, nil, s3err.InternalError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBody(strings.NewReader(""), BodySpec{Mode: tc.mode, ContentLength: 0, Header: tc.header, Chunk: tc.chunk})
			e := requireCode(t, err, tc.want)
			if tc.want == s3err.MissingContentLength && e.Status() != http.StatusLengthRequired {
				t.Fatalf("status %d", e.Status())
			}
		})
	}
}

func TestStreamingBodyLength(t *testing.T) {
	body, err := unsignedTrailerBody(t, "5\r\nhello\r\n0\r\n\r\n", 5, "")
	if err != nil {
		t.Fatal(err)
	}
	if body.Length() != 5 || body.PayloadSHA256() != "" || body.TrailerChecksumName() != "" {
		t.Fatalf("Length %d, PayloadSHA256 %q, TrailerChecksumName %q", body.Length(), body.PayloadSHA256(), body.TrailerChecksumName())
	}
}

// closeTrackingBody stands for the client's request body, whose Close the proxy must reach.
type closeTrackingBody struct {
	io.Reader
	closed bool
}

func (c *closeTrackingBody) Close() error { c.closed = true; return nil }

func TestCloseClosesClientBody(t *testing.T) {
	client := &closeTrackingBody{Reader: strings.NewReader("abc")}
	body, err := NewBody(client, BodySpec{Mode: PayloadUnsigned, ContentLength: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := body.Close(); err != nil || !client.closed {
		t.Fatalf("Close() = %v, closed %v", err, client.closed)
	}
}

func TestStripAWSChunked(t *testing.T) {
	cases := map[string]string{
		"aws-chunked":         "",
		"aws-chunked,gzip":    "gzip",
		"gzip, aws-chunked":   "gzip",
		"gzip,AWS-Chunked,br": "gzip, br",
		"":                    "",
		"identity":            "identity",
	}
	for in, want := range cases {
		if got := StripAWSChunked(in); got != want {
			t.Errorf("StripAWSChunked(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkPayloadSHA256Body(b *testing.B) {
	payload := bytes.Repeat([]byte{0x42}, 4<<20)
	sum := sha256.Sum256(payload)
	digest := hex.EncodeToString(sum[:])
	buf := make([]byte, 64<<10)
	reader := bytes.NewReader(payload)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		reader.Reset(payload)
		body, err := NewBody(reader, BodySpec{Mode: PayloadSHA256, PayloadSHA256: digest, ContentLength: int64(len(payload))})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := body.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
