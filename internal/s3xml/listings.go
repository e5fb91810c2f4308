package s3xml

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// MaxListBucketsResult bounds the backend's ListBuckets answer s3cond reads
// to filter: S3 lists at most 10,000 buckets a page, well under 16 MiB.
const MaxListBucketsResult = 16 << 20

// ListBucketsResult is S3's ListBuckets answer (ListAllMyBucketsResult).
// Decoding matches local names only, so a store that omits the namespace
// is read too.
type ListBucketsResult struct {
	XMLName           xml.Name       `xml:"ListAllMyBucketsResult"`
	Xmlns             string         `xml:"xmlns,attr,omitempty"`
	Owner             *BucketOwner   `xml:"Owner,omitempty"`
	Buckets           BucketsElement `xml:"Buckets"`
	ContinuationToken string         `xml:"ContinuationToken,omitempty"`
	Prefix            string         `xml:"Prefix,omitempty"`
}

// BucketsElement is always encoded, empty or not, as S3 does.
type BucketsElement struct {
	Bucket []ListedBucket `xml:"Bucket"`
}

// BucketOwner is the Owner of a ListBuckets answer.
type BucketOwner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName,omitempty"`
}

// ListedBucket is one <Bucket> of a ListBuckets answer.
type ListedBucket struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion,omitempty"`
	BucketArn    string `xml:"BucketArn,omitempty"`
}

// ParseListBuckets reads a backend's ListBuckets answer of at most
// MaxListBucketsResult bytes (the caller reads it; a longer one is refused
// here too).
func ParseListBuckets(data []byte) (*ListBucketsResult, error) {
	if len(data) > MaxListBucketsResult {
		return nil, fmt.Errorf("%w of %d bytes", errTooLarge, MaxListBucketsResult)
	}
	if _, err := scan(data, shape{roots: []string{"ListAllMyBucketsResult"}}); err != nil {
		return nil, err
	}
	var list ListBucketsResult
	if err := decodeInto(data, &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// Marshal renders the answer for the client, with the XML declaration.
func (l *ListBucketsResult) Marshal() []byte { return marshal(l) }

// ElementText finds the text of the first <element> in doc, the head of a
// listing: its start and end offsets. An element's name cannot appear as
// text in XML (a '<' in text is escaped), so the first match is an
// element. The caller bounds doc; s3cond renames a bucket there without
// reading the whole listing.
func ElementText(doc []byte, element string) (start, end int, found bool) {
	open := "<" + element + ">"
	i := bytes.Index(doc, []byte(open))
	if i < 0 {
		return 0, 0, false
	}
	start = i + len(open)
	j := bytes.Index(doc[start:], []byte("</"+element+">"))
	if j < 0 {
		return 0, 0, false
	}
	return start, start + j, true
}

// RootElement is the local name of doc's root element, read from the head
// of a document (an XML declaration, comments and whitespace before it are
// skipped); found is false when the head holds no start tag.
func RootElement(head []byte) (name string, found bool) {
	for {
		i := bytes.IndexByte(head, '<')
		if i < 0 || i+1 >= len(head) {
			return "", false
		}
		head = head[i+1:]
		if head[0] == '?' || head[0] == '!' { // a declaration, processing instruction or comment
			continue
		}
		end := bytes.IndexAny(head, " \t\r\n/>")
		if end <= 0 {
			return "", false
		}
		tag := head[:end]
		if colon := bytes.LastIndexByte(tag, ':'); colon >= 0 {
			tag = tag[colon+1:]
		}
		return string(tag), len(tag) > 0
	}
}
