package s3xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/s3cond/s3cond/s3err"
)

// maxDepth bounds element nesting. S3's request and result schemas need 3
// levels; the margin tolerates harmless extension elements.
const maxDepth = 16

// errTooLarge is the cause when a body exceeds its limit.
var errTooLarge = errors.New("body exceeds limit")

// readBounded reads at most limit bytes of r; one byte more is an error
// (wrapped as tooLarge), so a truncated document is never mistaken for a
// complete one. A read error that already is an S3 error is returned as is:
// s3cond's body readers verify signatures and checksums while streaming, and
// their SignatureDoesNotMatch or BadDigest must reach the client unchanged.
// Any other read error becomes readFailed.
func readBounded(r io.Reader, limit int64, tooLarge, readFailed s3err.Code) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		var s3e *s3err.Error
		if errors.As(err, &s3e) {
			return nil, s3e
		}
		return nil, s3err.Wrap(readFailed, fmt.Errorf("read body: %w", err))
	}
	if int64(len(data)) > limit {
		return nil, s3err.Wrap(tooLarge, fmt.Errorf("%w of %d bytes", errTooLarge, limit))
	}
	return data, nil
}

// shape is what the structural pre-check enforces before decoding.
type shape struct {
	// roots are the acceptable local names of the document element; none
	// accepts any.
	roots []string
	// child and maxChildren cap the number of direct children named child,
	// so an oversized list fails before it is decoded.
	child       string
	maxChildren int
}

// scan checks data is one well-formed UTF-8 XML document whose root is one of
// s.roots, every element in the S3 namespace or none, nesting within
// maxDepth and direct children within their cap. It returns the root's local
// name. encoding/xml expands no external entities and ignores DTDs, but a
// DOCTYPE has no place in an S3 body, so it is refused too.
func scan(data []byte, s shape) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var root string
	depth, children := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 && root != "" {
				return "", errors.New("more than one document element")
			}
			depth++
			if depth > maxDepth {
				return "", fmt.Errorf("elements nested deeper than %d", maxDepth)
			}
			if t.Name.Space != "" && t.Name.Space != Namespace {
				return "", fmt.Errorf("element %s in foreign namespace %q", t.Name.Local, t.Name.Space)
			}
			if depth == 1 {
				root = t.Name.Local
				if len(s.roots) > 0 && !slices.Contains(s.roots, root) {
					return "", fmt.Errorf("document element %s, want %v", root, s.roots)
				}
			}
			if depth == 2 && s.child != "" && t.Name.Local == s.child {
				children++
				if children > s.maxChildren {
					return "", fmt.Errorf("more than %d %s elements", s.maxChildren, s.child)
				}
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return "", errors.New("text outside the document element")
			}
		case xml.Directive:
			return "", errors.New("directives (DOCTYPE) are not allowed")
		}
	}
	if root == "" {
		return "", errors.New("no document element")
	}
	return root, nil
}

// decodeInto decodes the (already scanned) document element of data into v.
func decodeInto(data []byte, v any) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	return d.Decode(v)
}

// parseRequest reads a client body: any failure is MalformedXML.
func parseRequest(r io.Reader, limit, defaultLimit int64, s shape, v any) error {
	if limit <= 0 {
		limit = defaultLimit
	}
	// A body the client could not deliver in full is IncompleteBody, as S3 says.
	data, err := readBounded(r, limit, s3err.MalformedXML, s3err.IncompleteBody)
	if err != nil {
		return err
	}
	if _, err := scan(data, s); err != nil {
		return s3err.Wrap(s3err.MalformedXML, err)
	}
	if err := decodeInto(data, v); err != nil {
		return s3err.Wrap(s3err.MalformedXML, err)
	}
	return nil
}

// parseResult reads a backend body whose root is s.roots[0]. An <Error>
// document becomes the error it describes; anything unreadable is
// BadGateway. S3 may send whitespace before the document to keep a slow
// CompleteMultipartUpload alive, so leading whitespace is skipped.
func parseResult(r io.Reader, limit, defaultLimit int64, s shape, v any) error {
	if limit <= 0 {
		limit = defaultLimit
	}
	data, err := readBounded(r, limit, s3err.BadGateway, s3err.BadGateway)
	if err != nil {
		return err
	}
	data = bytes.TrimLeft(data, " \t\r\n")
	s.roots = append(s.roots[:len(s.roots):len(s.roots)], "Error")
	root, err := scan(data, s)
	if err != nil {
		return s3err.Wrap(s3err.BadGateway, fmt.Errorf("backend response: %w", err))
	}
	if root == "Error" {
		return backendError(data)
	}
	if err := decodeInto(data, v); err != nil {
		return s3err.Wrap(s3err.BadGateway, fmt.Errorf("backend response: %w", err))
	}
	return nil
}

// errBackendErrorDocument is the cause of an error a backend reported in the
// body of a 200 response.
var errBackendErrorDocument = errors.New("backend answered 200 with an Error document")

func backendError(data []byte) error {
	var doc struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if err := decodeInto(data, &doc); err != nil {
		return s3err.Wrap(s3err.BadGateway, fmt.Errorf("backend error document: %w", err))
	}
	if doc.Code == "" {
		return s3err.Wrap(s3err.InternalError, errBackendErrorDocument)
	}
	return &s3err.Error{Code: s3err.Code(doc.Code), Message: doc.Message, Cause: errBackendErrorDocument}
}

// marshal renders v as a standalone S3 document with the XML declaration.
// The types passed here hold only strings, ints and bools, so encoding
// cannot fail; characters XML cannot carry are replaced by U+FFFD, which
// cannot happen for values that came through these readers.
func marshal(v any) []byte {
	out, err := xml.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("s3xml: marshal %T: %v", v, err))
	}
	return append([]byte(xml.Header), out...)
}
