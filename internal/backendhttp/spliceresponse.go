package backendhttp

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// readPlainResponse parses the response head at the front of br, if it is
// already buffered whole and is of the plain kind an S3 store answers with:
// HTTP/1.1, a final status (not 1xx), a single Content-Length (which only a
// HEAD, 204 or 304 may omit), no Transfer-Encoding, Trailer or Connection
// header, no folded lines, and nothing http.ReadResponse would refuse. Then
// it consumes the head and returns the response (without Body); otherwise it
// leaves br untouched and returns false, and the caller uses
// http.ReadResponse.
//
// Why: http.ReadResponse cost eight allocations per backend answer (a
// textproto reader's state, a string per line and per header name it does
// not know, the transfer reader), a sixth of a forwarded GET. Here the whole
// head becomes one string, the values are slices of it, and the names come
// from it when the store spells them canonically, from plainHeaderNames when
// it does not (most stores send x-amz-* in lower case).
func readPlainResponse(br *bufio.Reader, req *http.Request) (*backendAnswer, bool) {
	buffered, _ := br.Peek(br.Buffered())
	end := bytes.Index(buffered, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	head := buffered[:end+2] // up to and including the last header line's CRLF
	lineEnd := bytes.Index(head, []byte("\r\n"))
	code, ok := parsePlainStatusLine(head[:lineEnd])
	if !ok {
		return nil, false
	}
	// Count the header lines, so that one array holds every value.
	lines := bytes.Count(head, []byte("\r\n")) - 1
	text := string(head) // the one string all names and values point into
	answer := &backendAnswer{Response: http.Response{
		Status: text[len("HTTP/1.1 "):lineEnd], StatusCode: code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, lines), ContentLength: -1, Request: req,
	}}
	values := answer.values[:0]
	if lines > len(answer.values) {
		values = make([]string, 0, lines)
	}
	if !parsePlainHeader(answer.Header, text[lineEnd+2:], values) {
		return nil, false
	}
	if !setPlainLength(&answer.Response, req) {
		return nil, false
	}
	_, _ = br.Discard(end + 4)
	return answer, true
}

// backendAnswer is a response read by readPlainResponse together with its
// body and the backing array of its header values: one allocation where
// three separate ones cost a forwarded GET two of its fifty. All of it lives
// as long as the caller keeps the response.
type backendAnswer struct {
	http.Response
	body splicedBody
	// values backs the header values of an answer of up to sixteen lines
	// (versitygw answers a GET with twelve, naming its request ID twice).
	values [16]string
}

// parsePlainStatusLine reads "HTTP/1.1 NNN[ reason]" with a final status.
func parsePlainStatusLine(line []byte) (int, bool) {
	const proto = "HTTP/1.1 "
	if len(line) < len(proto)+3 || string(line[:len(proto)]) != proto {
		return 0, false
	}
	digits := line[len(proto) : len(proto)+3]
	if len(line) > len(proto)+3 && line[len(proto)+3] != ' ' {
		return 0, false
	}
	code := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		code = code*10 + int(c-'0')
	}
	if code < 200 || code > 999 || !plainHeaderValue(string(line)) {
		return 0, false
	}
	return code, true
}

// parsePlainHeader fills h from the header lines in block (each ending in
// CRLF). values, empty with room for a value per line, backs every value,
// each header taking a full slice of it.
func parsePlainHeader(h http.Header, block string, values []string) bool {
	for block != "" {
		line, rest, _ := strings.Cut(block, "\r\n") // every line of block ends in CRLF
		block = rest
		colon := strings.IndexByte(line, ':')
		if colon <= 0 {
			return false // no name, or a folded continuation line
		}
		name, ok := plainHeaderName(line[:colon])
		if !ok {
			return false
		}
		switch name {
		case "Transfer-Encoding", "Trailer", "Connection":
			return false
		}
		value := trimSpaceTab(line[colon+1:])
		if !plainHeaderValue(value) {
			return false
		}
		if existing, seen := h[name]; seen {
			h[name] = append(existing, value)
			continue
		}
		values = append(values, value)
		h[name] = values[len(values)-1 : len(values) : len(values)]
	}
	return true
}

// setPlainLength sets resp.ContentLength as http.ReadResponse would, and
// reports false for a response whose end a Content-Length does not give.
func setPlainLength(resp *http.Response, req *http.Request) bool {
	lengths := resp.Header["Content-Length"]
	switch {
	case len(lengths) > 1:
		return false
	case len(lengths) == 1:
		n, err := strconv.ParseUint(lengths[0], 10, 63) // digits only: no sign, no space
		if err != nil {
			return false
		}
		resp.ContentLength = int64(n)
	}
	switch {
	case req != nil && req.Method == http.MethodHead:
		// The length of what a GET would return, or -1.
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		resp.ContentLength = 0
	case len(lengths) == 0:
		return false // delimited by the connection's close
	}
	return true
}

// plainHeaderName returns the canonical form of a header name (RFC 9110
// token): the bytes themselves when already canonical, an entry of
// plainHeaderNames, or, failing both, a new string.
func plainHeaderName(raw string) (string, bool) {
	if raw == "" || len(raw) > 128 {
		return "", false
	}
	if !httpguts.ValidHeaderFieldName(raw) {
		return "", false
	}
	var buf [128]byte
	key := appendCanonicalName(buf[:0], raw)
	if string(key) == raw {
		return raw, true // a slice of the head: no allocation
	}
	if name, ok := plainHeaderNames[string(key)]; ok { // no allocation for the lookup
		return name, true
	}
	return string(key), true
}

// appendCanonicalName appends raw with each word capitalised ("x-amz-id-2"
// -> "X-Amz-Id-2"), as textproto canonicalises a valid name.
func appendCanonicalName(dst []byte, raw string) []byte {
	upper := true
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
		upper = c == '-'
	}
	return dst
}

// plainHeaderNames are the canonical names of what S3 stores answer with,
// for stores that send them in another case (versitygw, MinIO and others
// send x-amz-* in lower case, S3 sends "ETag").
var plainHeaderNames = func() map[string]string {
	names := []string{
		"Accept-Ranges", "Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language",
		"Content-Length", "Content-Md5", "Content-Range", "Content-Type", "Date", "Etag", "Expires",
		"Last-Modified", "Location", "Server", "Vary", "X-Amz-Request-Id", "X-Amz-Id-2", "X-Amz-Version-Id",
		"X-Amz-Delete-Marker", "X-Amz-Storage-Class", "X-Amz-Server-Side-Encryption", "X-Amz-Expiration",
		"X-Amz-Checksum-Crc32", "X-Amz-Checksum-Crc32c", "X-Amz-Checksum-Crc64nvme", "X-Amz-Checksum-Sha1",
		"X-Amz-Checksum-Sha256", "X-Amz-Checksum-Type", "X-Amz-Mp-Parts-Count", "X-Amz-Tagging-Count",
		"X-Amz-Object-Lock-Mode", "X-Amz-Object-Lock-Retain-Until-Date", "X-Amz-Object-Lock-Legal-Hold",
		"X-Amz-Bucket-Region", "X-Amz-Copy-Source-Version-Id", "X-Amz-Restore", "X-Amz-Replication-Status",
		"X-Amz-Website-Redirect-Location", "Keep-Alive",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

// plainHeaderValue reports whether v has no control byte but HTAB (which
// http.ReadResponse would refuse, or which would need its own handling).
func plainHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func trimSpaceTab(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
