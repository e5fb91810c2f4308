package s3xml

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/s3cond/s3cond/s3err"
)

// DeleteRequest is the body of DeleteObjects (POST /bucket?delete).
type DeleteRequest struct {
	Quiet   bool
	Objects []ObjectIdentifier
}

// ObjectIdentifier is one <Object> of a DeleteObjects request. ETag is the
// per-key If-Match condition S3 added in 2024, Size and LastModifiedTime
// its per-key x-amz-if-match-size and x-amz-if-match-last-modified-time;
// each is the element's text as sent ("" = none), for the precondition
// package to read.
type ObjectIdentifier struct {
	Key              string
	VersionID        string
	ETag             string
	Size             string
	LastModifiedTime string
}

// Conditional reports whether the entry carries any condition.
func (o ObjectIdentifier) Conditional() bool {
	return o.ETag != "" || o.Size != "" || o.LastModifiedTime != ""
}

// Unconditional is the entry without its conditions, for sending once
// s3cond has enforced them.
func (o ObjectIdentifier) Unconditional() ObjectIdentifier {
	o.ETag, o.Size, o.LastModifiedTime = "", "", ""
	return o
}

// deleteWire is the XML form of DeleteRequest. Unknown elements are ignored.
type deleteWire struct {
	XMLName xml.Name     `xml:"Delete"`
	Xmlns   string       `xml:"xmlns,attr,omitempty"`
	Objects []objectWire `xml:"Object"`
	Quiet   bool         `xml:"Quiet,omitempty"`
}

type objectWire struct {
	// Key is a pointer to tell a missing <Key> from an empty one; both are
	// refused, but the message differs.
	Key              *string `xml:"Key"`
	VersionID        string  `xml:"VersionId,omitempty"`
	ETag             string  `xml:"ETag,omitempty"`
	LastModifiedTime string  `xml:"LastModifiedTime,omitempty"`
	Size             string  `xml:"Size,omitempty"`
}

// ParseDeleteRequest reads a DeleteObjects body of at most limit bytes
// (DefaultDeleteRequestLimit if limit <= 0). Like S3 it answers MalformedXML
// for a body that is not well-formed, has no <Object>, more than 1000 of them,
// or an <Object> without a non-empty <Key>.
func ParseDeleteRequest(r io.Reader, limit int64) (*DeleteRequest, error) {
	var wire deleteWire
	s := shape{roots: []string{"Delete"}, child: "Object", maxChildren: MaxDeleteObjects}
	if err := parseRequest(r, limit, DefaultDeleteRequestLimit, s, &wire); err != nil {
		return nil, err
	}
	if len(wire.Objects) == 0 {
		return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("delete request lists no objects"))
	}
	req := &DeleteRequest{Quiet: wire.Quiet, Objects: make([]ObjectIdentifier, 0, len(wire.Objects))}
	for i, o := range wire.Objects {
		if o.Key == nil {
			return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("object %d has no Key", i+1))
		}
		if *o.Key == "" {
			return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("object %d has an empty Key", i+1))
		}
		req.Objects = append(req.Objects, ObjectIdentifier{Key: *o.Key, VersionID: o.VersionID, ETag: o.ETag,
			Size: o.Size, LastModifiedTime: o.LastModifiedTime})
	}
	return req, nil
}

// Marshal renders the request for the backend, in the S3 namespace. Empty
// VersionID, ETag, Size and LastModifiedTime are omitted, so a subset whose
// conditions s3cond has already enforced can be forwarded without them.
func (d *DeleteRequest) Marshal() []byte {
	wire := deleteWire{Xmlns: Namespace, Quiet: d.Quiet, Objects: make([]objectWire, 0, len(d.Objects))}
	for _, o := range d.Objects {
		key := o.Key
		wire.Objects = append(wire.Objects, objectWire{Key: &key, VersionID: o.VersionID, ETag: o.ETag,
			LastModifiedTime: o.LastModifiedTime, Size: o.Size})
	}
	return marshal(wire)
}

// DeleteResult is the response of DeleteObjects.
type DeleteResult struct {
	Deleted []Deleted     `xml:"Deleted"`
	Errors  []DeleteError `xml:"Error"`
}

// Deleted is one key DeleteObjects removed (or marked deleted).
type Deleted struct {
	Key                   string `xml:"Key"`
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          bool   `xml:"DeleteMarker,omitempty"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

// DeleteError is one key DeleteObjects did not delete, with the S3 error code
// (for example PreconditionFailed when its <ETag> did not match).
type DeleteError struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId,omitempty"`
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
}

type deleteResultWire struct {
	XMLName xml.Name `xml:"DeleteResult"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	DeleteResult
}

// ParseDeleteResult reads a backend's DeleteObjects response of at most
// limit bytes (DefaultDeleteResultLimit if limit <= 0).
func ParseDeleteResult(r io.Reader, limit int64) (*DeleteResult, error) {
	var wire deleteResultWire
	// A backend may report up to one entry per requested key.
	s := shape{roots: []string{"DeleteResult"}}
	if err := parseResult(r, limit, DefaultDeleteResultLimit, s, &wire); err != nil {
		return nil, err
	}
	if n := len(wire.Deleted) + len(wire.Errors); n > MaxDeleteObjects {
		return nil, s3err.Wrap(s3err.BadGateway, fmt.Errorf("backend reported %d delete results, more than %d", n, MaxDeleteObjects))
	}
	res := wire.DeleteResult
	return &res, nil
}

// Marshal renders the result for the client as S3 does: XML declaration,
// S3 namespace, all <Deleted> entries then all <Error> entries.
func (d *DeleteResult) Marshal() []byte {
	return marshal(deleteResultWire{Xmlns: Namespace, DeleteResult: *d})
}
