package s3xml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// rewriteIdentitiesByDecoder is RewriteIdentities built on encoding/xml's
// tokenizer: ten times slower, it is the reference the scanner is fuzzed
// against (FuzzRewriteIdentitiesMatchesTheDecoder).
func rewriteIdentitiesByDecoder(dst io.Writer, src io.Reader, rename func(name string) (replacement string, ok bool)) error {
	w := &decoderWindow{r: src}
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
type decoderWindow struct {
	r    io.Reader
	buf  []byte
	base int64
	// err is the source's own read error (a backend that broke off), kept
	// so it is reported as itself rather than as a syntax error.
	err error
}

var errDecoderPendingTooLong = fmt.Errorf("%w: a token longer than %d bytes", ErrIdentityDocument, maxPendingBytes)

func (w *decoderWindow) Read(p []byte) (int, error) {
	if len(w.buf) > maxPendingBytes {
		w.err = errDecoderPendingTooLong
		return 0, w.err
	}
	n, err := w.r.Read(p)
	w.buf = append(w.buf, p[:n]...)
	if err != nil && !errors.Is(err, io.EOF) {
		w.err = err
	}
	return n, err
}

func (w *decoderWindow) pending(offset int64) int { return int(offset - w.base) }

// flushTo writes the input before offset and forgets it.
func (w *decoderWindow) flushTo(dst io.Writer, offset int64) error {
	if _, err := dst.Write(w.buf[:w.pending(offset)]); err != nil {
		return err
	}
	w.drop(offset)
	return nil
}

// drop forgets the input before offset, unwritten.
func (w *decoderWindow) drop(offset int64) {
	w.buf = append(w.buf[:0], w.buf[w.pending(offset):]...)
	w.base = offset
}

// replace writes the input before start, then replacement (escaped) in
// place of the input from start to end.
func (w *decoderWindow) replace(dst io.Writer, start, end int64, replacement string) error {
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
func (w *decoderWindow) flushAll(dst io.Writer) error {
	_, err := dst.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}
