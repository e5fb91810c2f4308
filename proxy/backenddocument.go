package proxy

import (
	"encoding/xml"
	"strings"

	"github.com/s3cond/s3cond/internal/s3xml"
)

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
func (v clientView) errorDocument(doc s3xml.FlatDocument) s3xml.FlatDocument {
	out := s3xml.FlatDocument{Root: xml.Name{Local: "Error"}}
	hasID := false
	for _, f := range doc.Fields {
		switch f.Name {
		case "Code", "Message":
			out.Fields = append(out.Fields, s3xml.Field{Name: f.Name, Value: v.scrub(f.Value)})
		case "Resource":
			out.Fields = append(out.Fields, s3xml.Field{Name: f.Name, Value: v.c.r.URL.Path})
		case "RequestId":
			out.Fields = append(out.Fields, s3xml.Field{Name: f.Name, Value: v.c.id})
			hasID = true
		case "BucketName", "Bucket":
			out.Fields = append(out.Fields, s3xml.Field{Name: f.Name, Value: v.clientBucket(f.Value)})
		default:
			if errorElements[f.Name] {
				out.Fields = append(out.Fields, s3xml.Field{Name: f.Name, Value: v.scrub(f.Value)})
			}
		}
	}
	if !hasID {
		out.Fields = append(out.Fields, s3xml.Field{Name: "RequestId", Value: v.c.id})
	}
	return out
}

// completeResult is a CompleteMultipartUploadResult naming the object as
// the client addressed it, not as s3cond addressed the backend.
func (v clientView) completeResult(doc s3xml.FlatDocument) s3xml.FlatDocument {
	out := s3xml.FlatDocument{Root: doc.Root}
	for _, f := range doc.Fields {
		switch f.Name {
		case "Location":
			f.Value = v.clientURL()
		case "Bucket":
			f.Value = v.clientBucket(f.Value)
		default:
			f.Value = v.scrub(f.Value)
		}
		out.Fields = append(out.Fields, f)
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
