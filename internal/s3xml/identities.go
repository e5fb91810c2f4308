package s3xml

import (
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
// it is not well-formed XML, nests too deep or has an overlong token.
var ErrIdentityDocument = errors.New("cannot rewrite the identities of the document")

// RewriteIdentities copies the XML document src to dst, with the text of
// each ID and DisplayName directly inside an Owner, Initiator or Grantee
// replaced by rename's answer when rename says so (ok). It returns the
// error of reading src or writing dst, or one wrapping
// ErrIdentityDocument; what was written before it stays written.
func RewriteIdentities(dst io.Writer, src io.Reader, rename func(name string) (replacement string, ok bool)) error {
	w := &window{r: src}
	dec := xml.NewDecoder(w)
	var stack []string
	var done int64 // input offset up to which every token was handled
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return w.flushAll(dst)
		}
		if err != nil {
			if w.err != nil {
				return w.err
			}
			return fmt.Errorf("%w: %w", ErrIdentityDocument, err)
		}
		end := dec.InputOffset()
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == identityDepth {
				return fmt.Errorf("%w: nested deeper than %d elements", ErrIdentityDocument, identityDepth)
			}
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if n := len(stack); n >= 2 && identityNames[stack[n-1]] && identityParents[stack[n-2]] {
				if replacement, ok := rename(string(t)); ok {
					if err := w.replace(dst, done, end, replacement); err != nil {
						return err
					}
				}
			}
		}
		done = end
		if w.pending(done) >= flushBytes {
			if err := w.flushTo(dst, done); err != nil {
				return err
			}
		}
	}
}

// window records what the decoder reads from the source, from the offset
// base on, so that handled input can be copied on byte for byte.
type window struct {
	r    io.Reader
	buf  []byte
	base int64
	// err is the source's own read error (a backend that broke off), kept
	// so it is reported as itself rather than as a syntax error.
	err error
}

var errPendingTooLong = fmt.Errorf("%w: a token longer than %d bytes", ErrIdentityDocument, maxPendingBytes)

func (w *window) Read(p []byte) (int, error) {
	if len(w.buf) > maxPendingBytes {
		w.err = errPendingTooLong
		return 0, w.err
	}
	n, err := w.r.Read(p)
	w.buf = append(w.buf, p[:n]...)
	if err != nil && !errors.Is(err, io.EOF) {
		w.err = err
	}
	return n, err
}

func (w *window) pending(offset int64) int { return int(offset - w.base) }

// flushTo writes the input before offset and forgets it.
func (w *window) flushTo(dst io.Writer, offset int64) error {
	if _, err := dst.Write(w.buf[:w.pending(offset)]); err != nil {
		return err
	}
	w.drop(offset)
	return nil
}

// drop forgets the input before offset, unwritten.
func (w *window) drop(offset int64) {
	w.buf = append(w.buf[:0], w.buf[w.pending(offset):]...)
	w.base = offset
}

// replace writes the input before start, then replacement (escaped) in
// place of the input from start to end.
func (w *window) replace(dst io.Writer, start, end int64, replacement string) error {
	if err := w.flushTo(dst, start); err != nil {
		return err
	}
	if err := xml.EscapeText(dst, []byte(replacement)); err != nil {
		return err
	}
	w.drop(end)
	return nil
}

// flushAll writes whatever input is left (the document's end).
func (w *window) flushAll(dst io.Writer) error {
	_, err := dst.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}
