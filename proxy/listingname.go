package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
)

// bucketNameElements names, for each document root that names its bucket,
// the element that holds the name. In each of these documents it is the
// root's first child that can hold a bucket name, before any key, marker
// or prefix the client chose. The document, not the operation, decides: a
// store that answers a sub-resource it does not know with the bucket's
// listing names its bucket all the same.
var bucketNameElements = map[string]string{
	"ListBucketResult":              "Name",
	"ListVersionsResult":            "Name",
	"ListMultipartUploadsResult":    "Bucket",
	"ListPartsResult":               "Bucket",
	"InitiateMultipartUploadResult": "Bucket",
	"CompleteMultipartUploadResult": "Bucket",
}

// operationNameElements is where an operation's own answer names its
// bucket, for a store whose document has another root than S3's.
var operationNameElements = map[operation.Operation]string{
	operation.ListObjects:           "Name",
	operation.ListObjectsV2:         "Name",
	operation.ListObjectVersions:    "Name",
	operation.ListMultipartUploads:  "Bucket",
	operation.ListParts:             "Bucket",
	operation.CreateMultipartUpload: "Bucket",
}

// nameElement is the element of head that names the bucket: by the
// document's root, else by the operation.
func nameElement(c *call, head []byte) (string, bool) {
	if root, found := s3xml.RootElement(head); found {
		if element, known := bucketNameElements[root]; known {
			return element, true
		}
	}
	element, known := operationNameElements[c.op]
	return element, known
}

// bucketNameSearchBytes bounds how much of a listing is searched for the
// bucket's name; S3 writes it in the first few hundred bytes.
const bucketNameSearchBytes = 4 << 10

// renamedBucket reports the backend's name for the call's bucket when
// backend.buckets maps it to another name and the answer is a document
// (not the client's data) that may name it; the answer must then be read
// before the client sees it. Unmapped buckets (the usual case) cost one
// map lookup.
func renamedBucket(c *call, resp *http.Response) (backendName string, ok bool) {
	backendName, mapped := c.backend.Buckets[c.target.Bucket]
	if !mapped || backendName == c.target.Bucket || resp.StatusCode != http.StatusOK || resp.ContentLength == 0 ||
		c.r.Method == http.MethodHead || dataAnswers[c.op] {
		return "", false
	}
	return backendName, true
}

// relayRenamed streams a successful answer whose document names the
// backend's bucket, with the client's name in its place: a listing can be
// megabytes long, so only its head is read and rewritten, and the rest
// streams as forward streams any answer. If the name is not where S3 puts
// it, the answer passes untouched. With identities, the renamed document
// goes on through relayIdentities.
func (p *Proxy) relayRenamed(c *call, resp *http.Response, backendName string, identities bool) {
	body := bufio.NewReaderSize(resp.Body, bucketNameSearchBytes)
	head, _ := body.Peek(bucketNameSearchBytes) // shorter at the body's end; a read error shows in the copy
	h := c.w.Header()
	clientResponseHeader(c, h, resp.Header)
	var start, end int
	element, found := nameElement(c, head)
	if found {
		start, end, found = s3xml.ElementText(head, element)
	}
	var renamed io.Reader = body
	length := resp.ContentLength
	if found && string(head[start:end]) == backendName {
		renamedHead := make([]byte, 0, start+len(c.target.Bucket))
		renamedHead = append(append(renamedHead, head[:start]...), c.target.Bucket...)
		if length >= 0 {
			length += int64(len(c.target.Bucket) - len(backendName))
			h.Set("Content-Length", strconv.FormatInt(length, 10))
		}
		h.Del("Content-Md5") // of the backend's bytes, not these
		_, _ = body.Discard(end)
		renamed = io.MultiReader(bytes.NewReader(renamedHead), body)
	}
	if identities {
		p.relayIdentities(c, resp.StatusCode, length, renamed)
		return
	}
	c.w.WriteHeader(resp.StatusCode)
	p.copyResponseBody(c, renamed)
}
