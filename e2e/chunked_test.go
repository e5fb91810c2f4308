package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestSignedChunkedTampering sends signed aws-chunked uploads built by hand:
// an honest one must be stored; each tampered one must get S3's error and
// leave nothing behind (HEAD 404, no multipart upload).
func TestSignedChunkedTampering(t *testing.T) {
	e := NewEnv(t)
	ctx := t.Context()
	CreateBucket(t, e.Client(t, e.RW), "chunks")
	data := PatternBytes(21, 200_000) // four 64 KiB chunks, the last one short
	const chunk = 64 << 10

	for _, trailer := range []bool{false, true} {
		honest := NewChunkedUpload(data, chunk, trailer)
		key := "honest-" + map[bool]string{false: "plain", true: "trailer"}[trailer]
		resp := sendChunked(t, e, honest, "/chunks/"+key)
		if resp.Status != 200 {
			t.Fatalf("honest chunked upload (trailer %v): %d %s", trailer, resp.Status, resp.Body)
		}
		if got := getBytes(t, ctx, e.BackendClient(), "chunks", key); !bytes.Equal(got, data) {
			t.Fatalf("honest chunked upload (trailer %v) stored %d different bytes", trailer, len(got))
		}
	}

	type tamper struct {
		name    string
		trailer bool
		change  func(*ChunkedUpload)
		status  int
		code    string // empty: any S3 error code with that status
	}
	for _, tc := range []tamper{
		{"flipped data byte", false, func(u *ChunkedUpload) { u.FlipDataByte = 70_000 }, 403, "SignatureDoesNotMatch"},
		{"flipped data byte in last chunk", true, func(u *ChunkedUpload) { u.FlipDataByte = len(data) - 1 }, 403, "SignatureDoesNotMatch"},
		{"flipped chunk signature", false, func(u *ChunkedUpload) { u.FlipChunkSignature = 1 }, 403, "SignatureDoesNotMatch"},
		{"flipped final chunk signature", true, func(u *ChunkedUpload) { u.FlipChunkSignature = 4 }, 403, "SignatureDoesNotMatch"},
		{"wrong trailer checksum", true, func(u *ChunkedUpload) { u.WrongChecksum = true }, 400, "BadDigest"},
		{"flipped trailer signature", true, func(u *ChunkedUpload) { u.FlipTrailerSig = true }, 403, "SignatureDoesNotMatch"},
		{"truncated", false, func(u *ChunkedUpload) { u.TruncateAt = 150_000 }, 400, "IncompleteBody"},
		{"truncated with trailer", true, func(u *ChunkedUpload) { u.TruncateAt = 150_000 }, 400, "IncompleteBody"},
		// S3's minimum: every chunk but the last data chunk has 8 KiB.
		{"4 KiB chunks", false, func(u *ChunkedUpload) { u.ChunkSize = 4 << 10 }, 400, "InvalidChunkSizeError"},
		{"4 KiB chunks with trailer", true, func(u *ChunkedUpload) { u.ChunkSize = 4 << 10 }, 400, "InvalidChunkSizeError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := NewChunkedUpload(data, chunk, tc.trailer)
			tc.change(u)
			key := "tampered-" + strings.ReplaceAll(tc.name, " ", "-")
			resp := sendChunked(t, e, u, "/chunks/"+key)
			if tc.code != "" {
				resp.RequireError(t, tc.status, tc.code)
			} else {
				if resp.Status != tc.status {
					t.Fatalf("want %d, got %d: %s", tc.status, resp.Status, resp.Body)
				}
				doc, err := resp.Error()
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %d %s", tc.name, resp.Status, doc.Code)
			}
			requireMissing(t, ctx, e.Client(t, e.RW), "chunks", key)
			requireMissing(t, ctx, e.BackendClient(), "chunks", key)
			requireNoUploads(t, ctx, e.BackendClient(), "chunks")
		})
	}
	requireOnlyKeys(t, e.BackendClient(), "chunks", "honest-plain", "honest-trailer")
}

func sendChunked(t *testing.T, e *Env, u *ChunkedUpload, path string) *RawResponse {
	t.Helper()
	req, err := u.Request(e.Endpoint, path, e.RW, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req = req.WithContext(t.Context())
	resp, err := Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
