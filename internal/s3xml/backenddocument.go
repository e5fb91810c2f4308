package s3xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// MaxBackendDocument bounds the backend answers s3cond reads whole to
// rewrite (error documents, CompleteMultipartUpload results, a ListParts
// answer of one part). S3's are a few hundred bytes; a larger one is not an
// S3 document s3cond can vouch for.
const MaxBackendDocument = 64 << 10

// FlatDocument is an S3 document of one level, such as <Error> or
// <CompleteMultipartUploadResult>: a root and its text-only children, in
// order. Children with elements of their own are not kept.
type FlatDocument struct {
	Root   xml.Name
	Fields []Field
}

// Field is one text-only child of a FlatDocument.
type Field struct{ Name, Value string }

// Get returns the first child named name, or "".
func (d FlatDocument) Get(name string) string {
	for _, f := range d.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// ParseFlatDocument reads body, a backend's answer of at most
// MaxBackendDocument bytes, as a flat XML document of any root, within the
// structure bounds of every reader here.
func ParseFlatDocument(body []byte) (FlatDocument, error) {
	if len(body) > MaxBackendDocument {
		return FlatDocument{}, fmt.Errorf("parse backend document: %w of %d bytes", errTooLarge, MaxBackendDocument)
	}
	if _, err := scan(body, shape{}); err != nil {
		return FlatDocument{}, fmt.Errorf("parse backend document: %w", err)
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	var doc FlatDocument
	depth := 0
	var text strings.Builder
	nested := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if doc.Root.Local == "" || depth != 0 {
				return FlatDocument{}, fmt.Errorf("parse backend document: no complete root element")
			}
			return doc, nil
		}
		if err != nil {
			return FlatDocument{}, fmt.Errorf("parse backend document: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1 && doc.Root.Local != "":
				return FlatDocument{}, fmt.Errorf("parse backend document: more than one root element")
			case depth == 1:
				doc.Root = t.Name
			case depth == 2:
				text.Reset()
				nested = false
			default:
				nested = true
			}
		case xml.CharData:
			if depth == 2 {
				text.Write(t)
			}
		case xml.EndElement:
			if depth == 2 && !nested {
				doc.Fields = append(doc.Fields, Field{Name: t.Name.Local, Value: text.String()})
			}
			depth--
		}
	}
}

// Render writes the document back as XML, the root's namespace kept.
func (d FlatDocument) Render() []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<" + d.Root.Local)
	if d.Root.Space != "" {
		b.WriteString(` xmlns="`)
		_ = xml.EscapeText(&b, []byte(d.Root.Space))
		b.WriteString(`"`)
	}
	b.WriteString(">")
	for _, f := range d.Fields {
		b.WriteString("<" + f.Name + ">")
		_ = xml.EscapeText(&b, []byte(f.Value))
		b.WriteString("</" + f.Name + ">")
	}
	b.WriteString("</" + d.Root.Local + ">")
	return b.Bytes()
}

// UploadChecksum is what a backend's ListParts answer says of a multipart
// upload's checksum: its algorithm, or, for an <Error>, the store's code.
type UploadChecksum struct {
	Algorithm string
	Code      string
}

// ReadUploadChecksum reads a ListParts answer (or the store's error) of at
// most MaxBackendDocument bytes for the upload's ChecksumAlgorithm. The
// error document is not turned into an error: the caller asks only to
// choose which error a failed part gets.
func ReadUploadChecksum(r io.Reader) (UploadChecksum, error) {
	data, err := readBounded(r, MaxBackendDocument, s3err.BadGateway, s3err.BadGateway)
	if err != nil {
		return UploadChecksum{}, err
	}
	if _, err := scan(data, shape{roots: append(listPartsRoots[:len(listPartsRoots):len(listPartsRoots)], "Error")}); err != nil {
		return UploadChecksum{}, fmt.Errorf("backend ListParts answer: %w", err)
	}
	var doc struct {
		ChecksumAlgorithm string
		Code              string
	}
	if err := decodeInto(data, &doc); err != nil {
		return UploadChecksum{}, fmt.Errorf("backend ListParts answer: %w", err)
	}
	return UploadChecksum{Algorithm: strings.TrimSpace(doc.ChecksumAlgorithm), Code: doc.Code}, nil
}

// listPartsRoots are the roots a ListParts answer comes under: S3's, and
// the ListPartsResponse of stores whose answers are generated from the
// SDK's model (moto 5.2), the same document under another name.
var listPartsRoots = []string{"ListPartsResult", "ListPartsResponse"}

// PartsPage is one ListParts answer as lease sizing reads it: the parts'
// sizes and where the next page starts.
type PartsPage struct {
	IsTruncated          bool
	NextPartNumberMarker string
	Sizes                []int64
}

// ReadPartsPage reads a ListParts answer of at most limit bytes, with at
// most maxParts parts (the page size asked for).
func ReadPartsPage(r io.Reader, limit int64, maxParts int) (PartsPage, error) {
	data, err := readBounded(r, limit, s3err.BadGateway, s3err.BadGateway)
	if err != nil {
		return PartsPage{}, err
	}
	if _, err := scan(data, shape{roots: listPartsRoots, child: "Part", maxChildren: maxParts}); err != nil {
		return PartsPage{}, fmt.Errorf("backend ListParts answer: %w", err)
	}
	var doc struct {
		IsTruncated          bool
		NextPartNumberMarker string
		Parts                []struct{ Size int64 } `xml:"Part"`
	}
	if err := decodeInto(data, &doc); err != nil {
		return PartsPage{}, fmt.Errorf("backend ListParts answer: %w", err)
	}
	page := PartsPage{IsTruncated: doc.IsTruncated, NextPartNumberMarker: strings.TrimSpace(doc.NextPartNumberMarker)}
	for _, p := range doc.Parts {
		page.Sizes = append(page.Sizes, p.Size)
	}
	return page, nil
}
