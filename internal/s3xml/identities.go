package s3xml

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// Identity rewriting. A store names the principal behind a bucket, object,
// upload or grant in <Owner>, <Initiator> and <Grantee>, each with an <ID>
// and a <DisplayName>; versitygw names them by access key, so behind s3cond
// they name s3cond's backend key. RewriteIdentities replaces those names in
// a document as it streams: listings can be any length, so it never holds
// more than a token and a read-ahead, and every byte it does not replace is
// copied as it came (no re-encoding, which would change namespaces,
// whitespace and escapes under a client's parser).
//
// It scans markup itself rather than through encoding/xml, whose tokens
// cost ten times the time of relaying a listing; it only needs to find
// tags, and is fuzzed against encoding/xml's tokenizer for equal output.

// identityParents are the elements whose ID and DisplayName name a principal.
var identityParents = map[string]bool{"Owner": true, "Initiator": true, "Grantee": true}

// identityNames are the children of identityParents that are rewritten.
var identityNames = map[string]bool{"ID": true, "DisplayName": true}

// flushBytes is how much unchanged input is gathered before it is written
// on, so a listing leaves in large writes rather than one per token.
const flushBytes = 32 << 10

// maxPendingBytes bounds what is held at once: the longest text S3 writes
// in a listing (a 1024-byte key, escaped) is far shorter.
const maxPendingBytes = 1 << 20

// identityDepth bounds nesting; S3's documents need five levels.
const identityDepth = 64

// ErrIdentityDocument is the cause when a document could not be rewritten:
// a tag is cut off, it nests too deep, has an overlong token or a DOCTYPE.
var ErrIdentityDocument = errors.New("cannot rewrite the identities of the document")

// RewriteIdentities copies the XML document src to dst, with the text of
// each ID and DisplayName directly inside an Owner, Initiator or Grantee
// replaced by rename's answer when rename says so (ok). It returns the
// error of reading src or writing dst, or one wrapping
// ErrIdentityDocument; what was written before it stays written.
func RewriteIdentities(dst io.Writer, src io.Reader, rename func(name string) (replacement string, ok bool)) error {
	// A listing's owners cut its text into a few hundred bytes between
	// replacements; written one by one, each would reach the connection on
	// its own. Gathered here, they leave in flushBytes writes.
	out := bufio.NewWriterSize(dst, flushBytes)
	s := &identityScanner{src: src, dst: out, rename: rename}
	for {
		done, err := s.step()
		if err != nil || done {
			return errors.Join(err, out.Flush())
		}
	}
}

// identityScanner holds buf, the input read: buf[:head] is written,
// buf[head:text] scanned, buf[text:] the text and markup still to scan.
type identityScanner struct {
	src    io.Reader
	dst    io.Writer
	rename func(string) (string, bool)
	buf    []byte
	head   int
	text   int
	eof    bool
	stack  []string
	last   lastRename
}

// step handles the text up to the next tag and that tag, reading more
// input when it is not all there.
func (s *identityScanner) step() (done bool, err error) {
	lt := bytes.IndexByte(s.buf[s.text:], '<')
	if lt < 0 {
		if s.eof {
			// A document cut off in an identity, as encoding/xml reads it.
			if err := s.renameText(s.text, len(s.buf), false); err != nil {
				return false, err
			}
			return true, s.write(len(s.buf))
		}
		if !s.inIdentity() {
			// Plain text: nothing to keep of it.
			if err := s.write(len(s.buf)); err != nil {
				return false, err
			}
			s.text = len(s.buf)
		}
		return false, s.fill()
	}
	tagStart := s.text + lt
	tagEnd, err := s.tagEnd(tagStart)
	if err != nil {
		return false, err
	}
	if tagEnd < 0 {
		return false, s.fill() // the tag goes on past what was read
	}
	if err := s.renameText(s.text, tagStart, false); err != nil {
		return false, err
	}
	if err := s.tag(tagStart, tagEnd); err != nil {
		return false, err
	}
	s.text = tagEnd
	if s.text-s.head >= flushBytes {
		return false, s.write(s.text)
	}
	return false, nil
}

// inIdentity reports whether the text being scanned is an identity's.
func (s *identityScanner) inIdentity() bool {
	n := len(s.stack)
	return n >= 2 && identityNames[s.stack[n-1]] && identityParents[s.stack[n-2]]
}

// renameText replaces buf[start:end], text (escaped) or a CDATA section's
// content, when it is an identity rename knows: the input before it is
// written, then the replacement in its place.
func (s *identityScanner) renameText(start, end int, cdata bool) error {
	if start == end || !s.inIdentity() {
		return nil
	}
	replacement, ok := s.renamed(s.buf[start:end], cdata)
	if !ok {
		return nil
	}
	if cdata {
		start -= len("<![CDATA[")
		end += len("]]>")
	}
	if err := s.write(start); err != nil {
		return err
	}
	if _, err := s.dst.Write(replacement); err != nil {
		return err
	}
	s.head = end
	return nil
}

// renamed is rename's escaped answer for an identity's raw text. A listing
// names the same principal in every entry, so the last answer is kept.
func (s *identityScanner) renamed(raw []byte, cdata bool) ([]byte, bool) {
	if s.last.known && s.last.cdata == cdata && string(raw) == s.last.raw {
		return s.last.replacement, s.last.ok
	}
	value := string(raw)
	if !cdata && bytes.IndexByte(raw, '&') >= 0 {
		var decoded bool
		if value, decoded = unescape(raw); !decoded {
			return nil, false // an entity XML does not define: not a name s3cond knows
		}
	}
	replacement, ok := s.rename(value)
	var escaped bytes.Buffer
	_ = xml.EscapeText(&escaped, []byte(replacement))
	s.last = lastRename{known: true, cdata: cdata, raw: string(raw), replacement: escaped.Bytes(), ok: ok}
	return s.last.replacement, ok
}

// lastRename is the last answer of renamed.
type lastRename struct {
	known, cdata, ok bool
	raw              string
	replacement      []byte
}

// tagEnd finds the end (just past it) of the markup starting at buf[at],
// '<': -1 if it is not all read yet.
func (s *identityScanner) tagEnd(at int) (int, error) {
	rest := s.buf[at:]
	end := -1
	switch {
	case len(rest) < len("<![CDATA[") && !s.eof:
		return -1, s.bound()
	case len(rest) > 1 && rest[1] == '!':
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			end = closing(rest, 4, "-->")
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			end = closing(rest, 9, "]]>")
		default:
			return 0, fmt.Errorf("%w: a DOCTYPE or declaration has no place in an S3 document", ErrIdentityDocument)
		}
	case len(rest) > 1 && rest[1] == '?':
		end = closing(rest, 2, "?>")
	default:
		end = startTagEnd(rest)
	}
	if end >= 0 {
		return at + end, nil
	}
	if s.eof {
		return 0, fmt.Errorf("%w: the document ends inside a tag", ErrIdentityDocument)
	}
	return -1, s.bound()
}

// bound refuses to hold more than maxPendingBytes to complete a token.
func (s *identityScanner) bound() error {
	if len(s.buf)-s.text > maxPendingBytes {
		return fmt.Errorf("%w: a token longer than %d bytes", ErrIdentityDocument, maxPendingBytes)
	}
	return nil
}

// closing is the end of b's markup, closed by the first close after from.
func closing(b []byte, from int, close string) int {
	if i := bytes.Index(b[from:], []byte(close)); i >= 0 {
		return from + i + len(close)
	}
	return -1
}

// startTagEnd is the end of an element tag, its attribute values (which
// may hold '>') skipped.
func startTagEnd(b []byte) int {
	var quote byte
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return i + 1
		}
	}
	return -1
}

// tag follows the element nesting through the markup buf[start:end], and
// renames a CDATA section inside an identity.
func (s *identityScanner) tag(start, end int) error {
	markup := s.buf[start:end]
	switch {
	case markup[1] == '!' && markup[2] == '[': // <![CDATA[...]]>
		return s.renameText(start+9, end-3, true)
	case markup[1] == '!', markup[1] == '?':
		return nil
	case markup[1] == '/':
		if len(s.stack) > 0 {
			s.stack = s.stack[:len(s.stack)-1]
		}
		return nil
	case markup[len(markup)-2] == '/':
		return nil // an empty element: <ID/>
	}
	if len(s.stack) == identityDepth {
		return fmt.Errorf("%w: nested deeper than %d elements", ErrIdentityDocument, identityDepth)
	}
	s.stack = append(s.stack, localName(markup[1:len(markup)-1]))
	return nil
}

// localName is the element name of a start tag's inside, without prefix.
func localName(inside []byte) string {
	colons, colon := 0, 0
	for i, c := range inside {
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '/' {
			inside = inside[:i]
			break
		}
		if c == ':' {
			colons, colon = colons+1, i
		}
	}
	// A prefix is cut as encoding/xml cuts it: one colon, text on both sides.
	if colons == 1 && colon > 0 && colon < len(inside)-1 {
		inside = inside[colon+1:]
	}
	if name, known := knownNames[string(inside)]; known {
		return name // no allocation for the names S3 writes most
	}
	return string(inside)
}

// knownNames are element names the scan meets on every listing entry.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"Contents", "Key", "LastModified", "ETag", "Size", "Owner", "ID", "DisplayName",
		"StorageClass", "Version", "DeleteMarker", "VersionId", "IsLatest", "Upload", "UploadId", "Initiator",
		"Initiated", "Part", "PartNumber", "Grant", "Grantee", "Permission", "CommonPrefixes", "Prefix",
		"ChecksumAlgorithm", "ChecksumType", "RestoreStatus"} {
		m[n] = n
	}
	return m
}()

// write sends the input up to upTo on.
func (s *identityScanner) write(upTo int) error {
	if upTo <= s.head {
		return nil
	}
	if _, err := s.dst.Write(s.buf[s.head:upTo]); err != nil {
		return err
	}
	s.head = upTo
	return nil
}

// fill reads more input onto buf.
func (s *identityScanner) fill() error {
	if err := s.bound(); err != nil {
		return err
	}
	if s.head > 0 {
		// What was written is forgotten before more is read.
		n := copy(s.buf, s.buf[s.head:])
		s.buf, s.text, s.head = s.buf[:n], s.text-s.head, 0
	}
	if cap(s.buf)-len(s.buf) < 16<<10 {
		s.buf = append(make([]byte, 0, 2*cap(s.buf)+64<<10), s.buf...)
	}
	n, err := s.src.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	switch {
	case errors.Is(err, io.EOF):
		s.eof = true
	case err != nil:
		return err
	}
	return nil
}

// unescape decodes the entities of an identity's text; ok is false for
// one XML does not define.
func unescape(raw []byte) (string, bool) {
	var b bytes.Buffer
	d := xml.NewDecoder(bytes.NewReader(append(append([]byte("<a>"), raw...), "</a>"...)))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return b.String(), true
		}
		if err != nil {
			return "", false
		}
		if t, ok := tok.(xml.CharData); ok {
			b.Write(t)
		}
	}
}
