package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
)

// Exactly-once retries (docs/spec.md §3, "Exactly-once retries"). An SDK
// retries a write whose answer it lost (a timeout, a connection reset
// after the store committed); evaluated again, a conditional retry meets
// the object its own first attempt wrote, and answers 412: the application
// concludes it lost a race it won. So a leased write that committed leaves
// a receipt on the lease row it releases (dynamolease/receipt.go), and a
// retry whose condition fails is given its first attempt's answer when the
// receipt is its own: the same principal, the same amz-sdk-invocation-id
// (which every attempt of one SDK call carries, and botocore and the Go
// SDK sign), the same key (the row's) and the same content (the body's
// digest and length; a copy's source; a completion's parts list), wherever
// the key has moved since. Everything in a receipt comes
// from the client's request or the store's answer to it: a principal can
// only ever be told again what it was told once.

// receipt is a write's answer as recorded for its retries, stored as JSON.
type receipt struct {
	Op         operation.Operation `json:"op"`
	Principal  string              `json:"principal"`
	Invocation string              `json:"invocation,omitempty"`
	// Content identifies what the request wrote (requestContent).
	Content string `json:"content"`
	// ETag is the ETag the write's answer gave, canonical (quoted).
	ETag string `json:"etag,omitempty"`
	// Header holds the answer's headers a retry is given again.
	Header map[string]string `json:"header,omitempty"`
	// Document is the answer's body, for a copy or a completion.
	Document string `json:"document,omitempty"`
}

// replayedHeaders are the headers of a write's answer that a retry's
// answer repeats: what names the version written and how it was stored.
var replayedHeaders = []string{
	"ETag", "X-Amz-Version-Id", "X-Amz-Server-Side-Encryption", "X-Amz-Checksum-Crc32",
	"X-Amz-Checksum-Crc32c", "X-Amz-Checksum-Crc64nvme", "X-Amz-Checksum-Sha1", "X-Amz-Checksum-Sha256",
	"X-Amz-Checksum-Type", "X-Amz-Expiration",
}

// answerHeader keeps the replayed headers of a write's answer.
func answerHeader(h http.Header) map[string]string {
	kept := map[string]string{}
	for _, name := range replayedHeaders {
		if v := h.Get(name); v != "" {
			kept[name] = v
		}
	}
	return kept
}

func (r receipt) encode() string {
	text, err := json.Marshal(r)
	if err != nil {
		return "" // a map of strings always encodes
	}
	return string(text)
}

func decodeReceipt(text string) (receipt, bool) {
	var r receipt
	if text == "" || json.Unmarshal([]byte(text), &r) != nil {
		return receipt{}, false
	}
	return r, true
}

// maxInvocationID bounds the amz-sdk-invocation-id s3cond keeps: SDKs send
// a UUID (36 characters).
const maxInvocationID = 64

// invocationID is the request's amz-sdk-invocation-id, an opaque string the
// client chose: empty (no receipt) unless it is one value of 1 to
// maxInvocationID printable ASCII characters.
func invocationID(r *http.Request) string {
	values := r.Header.Values("Amz-Sdk-Invocation-Id")
	if len(values) != 1 || len(values[0]) == 0 || len(values[0]) > maxInvocationID {
		return ""
	}
	for i := 0; i < len(values[0]); i++ {
		if b := values[0][i]; b < 33 || b > 126 {
			return ""
		}
	}
	return values[0]
}

// principal is who signed the call: its access key ID; empty (no receipt)
// for an anonymous call.
func principal(c *call) string {
	if c.auth == nil || c.auth.Anonymous {
		return ""
	}
	return c.auth.AccessKeyID
}

// requestContent identifies what a write writes, once its body was read
// to its end and verified: a PutObject's length and digest (its signed
// x-amz-content-sha256, else its checksum, header or trailer, else its
// Content-MD5; none: empty, and no receipt), a CopyObject's source as
// parsed (version included), a completion's parts list as s3cond rewrote
// it.
func requestContent(c *call) string {
	switch c.op {
	case operation.CompleteMultipartUpload:
		if c.completeBody == nil {
			return ""
		}
		return "parts " + sha256Hex(c.completeBody)
	case operation.CopyObject:
		return "copy " + c.r.Header.Get("X-Amz-Copy-Source")
	case operation.PutObject:
		return bodyContent(c)
	}
	return ""
}

// bodyContent is a PutObject body's length and digest (requestContent).
func bodyContent(c *call) string {
	if c.auth == nil || c.auth.Body == nil {
		return ""
	}
	length := "length " + strconv.FormatInt(c.auth.Body.Length(), 10)
	if sum := c.auth.Body.PayloadSHA256(); sum != "" {
		return length + " sha256 " + sum
	}
	if name, value, ok := c.auth.Body.Checksum(); ok {
		return length + " " + name + " " + value
	}
	if md5 := c.r.Header.Values("Content-Md5"); len(md5) == 1 {
		return length + " md5 " + md5[0]
	}
	return ""
}
