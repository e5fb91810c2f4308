package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/sigv4"
)

// keepsCutOffFramedStore stands for a store that decodes aws-chunked
// uploads and checks their CRC64NVME trailer, but stores whatever chunks
// arrived when the client half-closes before the final chunk (as versitygw
// does with a plain body cut off by a FIN). Other requests reach gofakes3.
func keepsCutOffFramedStore(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.Header.Get("Content-Encoding") != "aws-chunked" {
			inner.ServeHTTP(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body) // a FIN mid-body ends the read early: keep what came
		decoded, trailerOK := decodeChunksLeniently(raw)
		if !trailerOK {
			http.Error(w, "BadDigest", http.StatusBadRequest)
			return
		}
		put := r.Clone(r.Context())
		for _, h := range []string{"Content-Encoding", "X-Amz-Decoded-Content-Length", "X-Amz-Trailer"} {
			put.Header.Del(h)
		}
		put.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		put.Body, put.ContentLength = io.NopCloser(bytes.NewReader(decoded)), int64(len(decoded))
		put.Header.Set("Content-Length", strconv.Itoa(len(decoded)))
		inner.ServeHTTP(w, put)
	})
}

// decodeChunksLeniently returns the payload of the whole chunks in raw and
// whether the framing trailer (CRC64NVME), if one arrived, matches it.
func decodeChunksLeniently(raw []byte) ([]byte, bool) {
	var payload []byte
	rd := bufio.NewReader(bytes.NewReader(raw))
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return payload, true // cut off: no trailer to check
		}
		size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			return payload, false
		}
		if size == 0 {
			break
		}
		chunk := make([]byte, size+2)
		if _, err := io.ReadFull(rd, chunk); err != nil {
			return payload, true
		}
		payload = append(payload, chunk[:size]...)
	}
	for {
		line, err := rd.ReadString('\n')
		name, value, found := strings.Cut(strings.TrimSpace(line), ":")
		if found && strings.EqualFold(name, framingTrailer) {
			crc := sigv4.NewCRC64NVME()
			crc.Write(payload)
			var sum [crc64.Size]byte
			binary.BigEndian.PutUint64(sum[:], crc.Sum64())
			return payload, value == base64.StdEncoding.EncodeToString(sum[:])
		}
		if err != nil {
			return payload, true
		}
	}
}

// A store that keeps a framed upload cut off by a FIN must not be judged
// native: the cut-off case has to reach it with its first chunk.
func TestFramingIsNotNativeWhereTheStoreKeepsACutOffUpload(t *testing.T) {
	r := Framing(context.Background(), startFake(t, keepsCutOffFramedStore))
	if r.Verdict != Partial {
		t.Fatalf("%s (%s), want partial", r.Verdict, r.Detail)
	}
	if !strings.Contains(r.Detail, "cut off") {
		t.Fatalf("detail %q does not name the cut-off upload", r.Detail)
	}
}
