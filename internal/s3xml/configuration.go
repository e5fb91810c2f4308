package s3xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// Configuration bodies. A bucket or object configuration (replication,
// inventory, notification, logging, an ACL, ...) may name things beyond the
// bucket it configures: a destination bucket, a queue, a grantee. s3cond
// signs it with the store's key, so each such name must be checked against
// the client key's grant before the body is forwarded (proxy/configbody.go).
//
// The reader is deliberately path-agnostic: every element with a watched
// name counts wherever it stands and however often it occurs. A store that
// reads the first of two <Bucket> elements, or one nested where the schema
// does not put it, then finds nothing s3cond did not check; a document
// s3cond's own reading would have understood differently (a duplicate
// element, an element in another namespace, a DOCTYPE with entities) has no
// way around the check.

// ConfigurationSchema says what ReadConfiguration watches in one kind of
// configuration document. Element names are compared ignoring case, as a
// store whose XML binding is lenient might.
type ConfigurationSchema struct {
	// Roots are the accepted document elements.
	Roots []string
	// Limit bounds the body, in bytes.
	Limit int64
	// LimitIsS3s says Limit is S3's own bound for the document, which S3
	// answers with MaxMessageLengthExceeded (naming the bound) when
	// exceeded; otherwise an oversized body is MalformedXML.
	LimitIsS3s bool
	// BucketElements are the elements whose text names a bucket (as a
	// name or an S3 ARN): destinations and targets.
	BucketElements []string
	// ForeignElements are the elements whose presence alone names
	// something outside any grant s3cond makes (a queue, a topic, a
	// function, an account).
	ForeignElements []string
	// FlagElements are the elements whose text values the caller reads
	// (a public access block's switches).
	FlagElements []string
	// Grantees: the document may carry <Grantee> elements, whose ID, URI
	// and EmailAddress are read.
	Grantees bool
}

// Configuration is what ReadConfiguration found in a document.
type Configuration struct {
	// Body is the document as read: the bytes to forward.
	Body []byte
	// Buckets are the texts of the schema's bucket elements, trimmed.
	Buckets []Reference
	// Foreign are the foreign elements present.
	Foreign []string
	// Flags are the texts of the flag elements, by the schema's spelling.
	Flags map[string][]string
	// Grantees are the identifiers inside Grantee elements.
	Grantees []Grantee
}

// Reference is a bucket element's text and the element it stood in.
type Reference struct{ Element, Value string }

// Grantee is one identifier of a grantee: Kind is ID, URI or
// EmailAddress.
type Grantee struct{ Kind, Value string }

// granteeIdentifiers are the children of Grantee that say who it is.
var granteeIdentifiers = []string{"ID", "URI", "EmailAddress"}

// ReadConfiguration reads a configuration body of at most s.Limit bytes
// and reports what it names. A document that is not well-formed, has
// another root, nests deeper than S3's schemas or carries a DOCTYPE is
// MalformedXML; a body over the limit is MalformedXML too, as S3 answers an
// oversized configuration, unless the limit is S3's own (LimitIsS3s).
func ReadConfiguration(r io.Reader, s ConfigurationSchema) (Configuration, error) {
	data, err := readBounded(r, s.Limit, s3err.MalformedXML, s3err.IncompleteBody)
	if s.LimitIsS3s && errors.Is(err, errTooLarge) {
		return Configuration{}, s3err.Wrap(s3err.MaxMessageLengthExceeded, err).
			With("MaxMessageLengthBytes", strconv.FormatInt(s.Limit, 10))
	}
	if err != nil {
		return Configuration{}, err
	}
	if _, err := scan(data, shape{roots: s.Roots}); err != nil {
		return Configuration{}, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("configuration body: %w", err))
	}
	found, err := watch(data, s)
	if err != nil {
		return Configuration{}, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("configuration body: %w", err))
	}
	found.Body = data
	return found, nil
}

// watch walks a scanned document and collects the schema's elements.
func watch(data []byte, s ConfigurationSchema) (Configuration, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var found Configuration
	var stack []string
	var text []*strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return Configuration{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			text = append(text, &strings.Builder{})
			if name, ok := oneOf(t.Name.Local, s.ForeignElements); ok {
				found.Foreign = append(found.Foreign, name)
			}
		case xml.CharData:
			if len(text) > 0 {
				text[len(text)-1].Write(t)
			}
		case xml.EndElement:
			value := strings.TrimSpace(text[len(text)-1].String())
			found.record(stack, value, s)
			stack, text = stack[:len(stack)-1], text[:len(text)-1]
		}
	}
}

// record files the text of the element ending now (the top of stack).
func (c *Configuration) record(stack []string, value string, s ConfigurationSchema) {
	local := stack[len(stack)-1]
	if name, ok := oneOf(local, s.BucketElements); ok {
		c.Buckets = append(c.Buckets, Reference{Element: name, Value: value})
	}
	if name, ok := oneOf(local, s.FlagElements); ok {
		if c.Flags == nil {
			c.Flags = map[string][]string{}
		}
		c.Flags[name] = append(c.Flags[name], value)
	}
	if !s.Grantees {
		return
	}
	kind, ok := oneOf(local, granteeIdentifiers)
	if !ok {
		return
	}
	for _, ancestor := range stack[:len(stack)-1] {
		if strings.EqualFold(ancestor, "Grantee") {
			c.Grantees = append(c.Grantees, Grantee{Kind: kind, Value: value})
			return
		}
	}
}

// oneOf returns the spelling in names that local matches, ignoring case.
func oneOf(local string, names []string) (string, bool) {
	for _, n := range names {
		if strings.EqualFold(local, n) {
			return n, true
		}
	}
	return "", false
}
