package proxy

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// flatDocument is an S3 document of one level, such as <Error> or
// <CompleteMultipartUploadResult>: a root and its text-only children, in
// order. Children with elements of their own are not kept.
type flatDocument struct {
	root   xml.Name
	fields []docField
}

type docField struct{ name, value string }

// get returns the first child named name, or "".
func (d flatDocument) get(name string) string {
	for _, f := range d.fields {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

// parseFlatDocument reads body as a flat XML document.
func parseFlatDocument(body []byte) (flatDocument, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	var doc flatDocument
	depth := 0
	var text strings.Builder
	nested := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if doc.root.Local == "" || depth != 0 {
				return flatDocument{}, fmt.Errorf("parse backend document: no complete root element")
			}
			return doc, nil
		}
		if err != nil {
			return flatDocument{}, fmt.Errorf("parse backend document: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1 && doc.root.Local != "":
				return flatDocument{}, fmt.Errorf("parse backend document: more than one root element")
			case depth == 1:
				doc.root = t.Name
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
				doc.fields = append(doc.fields, docField{name: t.Name.Local, value: text.String()})
			}
			depth--
		}
	}
}

// render writes the document back as XML, the root's namespace kept.
func (d flatDocument) render() []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<" + d.root.Local)
	if d.root.Space != "" {
		b.WriteString(` xmlns="`)
		_ = xml.EscapeText(&b, []byte(d.root.Space))
		b.WriteString(`"`)
	}
	b.WriteString(">")
	for _, f := range d.fields {
		b.WriteString("<" + f.name + ">")
		_ = xml.EscapeText(&b, []byte(f.value))
		b.WriteString("</" + f.name + ">")
	}
	b.WriteString("</" + d.root.Local + ">")
	return b.Bytes()
}

// errorElements are the children of a backend <Error> a client may see,
// besides Code, Message, Resource, RequestId and the bucket names, which
// are rewritten. Anything else is dropped: HostId (the backend's host),
// Endpoint, and what describes s3cond's backend request (CanonicalRequest,
// StringToSign, SignatureProvided, AWSAccessKeyId, their *Bytes forms),
// as well as elements of stores s3cond does not know.
var errorElements = map[string]bool{
	"Key": true, "Condition": true, "ArgumentName": true, "ArgumentValue": true,
	"Header": true, "HeaderName": true, "AdditionalMessage": true,
	"MaxSizeAllowed": true, "MinSizeAllowed": true, "ProposedSize": true, "ActualObjectSize": true,
	"RangeRequested": true, "ETag": true, "PartNumber": true, "UploadId": true, "VersionId": true,
	"Method": true, "ResourceType": true, "AllowedMethod": true, "Region": true,
	"RequestTime": true, "ServerTime": true, "MaxAllowedSkewMilliseconds": true,
	"ClientComputedContentSHA256": true, "S3ComputedContentSHA256": true,
	"ExpectedDigest": true, "CalculatedDigest": true, "Content-MD5": true,
	"BucketName": true, "Bucket": true,
}

// clientView rewrites what a backend says into what the client addressed:
// s3cond's request ID, the client's host and bucket names.
type clientView struct {
	c *call
	// backendHost is the backend endpoint's host[:port].
	backendHost string
	// clientBuckets maps backend bucket names to client names.
	clientBuckets map[string]string
}

func newClientView(c *call) clientView {
	v := clientView{c: c, backendHost: c.backend.Endpoint.Host}
	if len(c.backend.Buckets) > 0 {
		v.clientBuckets = make(map[string]string, len(c.backend.Buckets))
		for client, backend := range c.backend.Buckets {
			v.clientBuckets[backend] = client
		}
	}
	return v
}

// clientBucket names a backend bucket as the client knows it.
func (v clientView) clientBucket(name string) string {
	if client, ok := v.clientBuckets[name]; ok {
		return client
	}
	return name
}

// scrub replaces the backend's host and mapped bucket names in free text.
func (v clientView) scrub(text string) string {
	if v.backendHost != "" {
		text = strings.ReplaceAll(text, v.backendHost, v.c.r.Host)
	}
	for backend, client := range v.clientBuckets {
		text = replaceWord(text, backend, client)
	}
	return text
}

// errorDocument is the backend's <Error> as the client sees it.
func (v clientView) errorDocument(doc flatDocument) flatDocument {
	out := flatDocument{root: xml.Name{Local: "Error"}}
	hasID := false
	for _, f := range doc.fields {
		switch f.name {
		case "Code", "Message":
			out.fields = append(out.fields, docField{f.name, v.scrub(f.value)})
		case "Resource":
			out.fields = append(out.fields, docField{f.name, v.c.r.URL.Path})
		case "RequestId":
			out.fields = append(out.fields, docField{f.name, v.c.id})
			hasID = true
		case "BucketName", "Bucket":
			out.fields = append(out.fields, docField{f.name, v.clientBucket(f.value)})
		default:
			if errorElements[f.name] {
				out.fields = append(out.fields, docField{f.name, v.scrub(f.value)})
			}
		}
	}
	if !hasID {
		out.fields = append(out.fields, docField{"RequestId", v.c.id})
	}
	return out
}

// completeResult is a CompleteMultipartUploadResult naming the object as
// the client addressed it, not as s3cond addressed the backend.
func (v clientView) completeResult(doc flatDocument) flatDocument {
	out := flatDocument{root: doc.root}
	for _, f := range doc.fields {
		switch f.name {
		case "Location":
			f.value = v.clientURL()
		case "Bucket":
			f.value = v.clientBucket(f.value)
		default:
			f.value = v.scrub(f.value)
		}
		out.fields = append(out.fields, f)
	}
	return out
}

// clientURL is the URL of the request as the client sent it to s3cond.
// The scheme is the listener's: an X-Forwarded-Proto header is the
// client's to set, so it is not trusted.
func (v clientView) clientURL() string {
	scheme := "http"
	if v.c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + v.c.r.Host + v.c.r.URL.EscapedPath()
}

// replaceWord replaces old in s where it stands as a whole bucket name,
// not as part of a longer one.
func replaceWord(s, old, replacement string) string {
	if old == "" || !strings.Contains(s, old) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		whole := (i == 0 || !isBucketByte(s[i-1])) && !continuesBucketName(s[end:])
		b.WriteString(s[:i])
		if whole {
			b.WriteString(replacement)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

// continuesBucketName reports whether rest, the text after a match, goes
// on with the same bucket name (a full stop ending a sentence does not).
func continuesBucketName(rest string) bool {
	switch {
	case rest == "":
		return false
	case rest[0] == '.':
		return len(rest) > 1 && isBucketByte(rest[1])
	}
	return isBucketByte(rest[0])
}

func isBucketByte(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.'
}
