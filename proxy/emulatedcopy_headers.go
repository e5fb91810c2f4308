package proxy

import (
	"context"
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// objectMetadataHeaders are what CopyObject's x-amz-metadata-directive
// chooses between the source's (COPY, the default) and the request's
// (REPLACE), besides x-amz-meta-*.
var objectMetadataHeaders = []string{"Content-Type", "Content-Encoding", "Content-Disposition",
	"Content-Language", "Cache-Control", "Expires"}

// destinationRequestHeaders are a CopyObject's headers about the new
// object that PutObject and CreateMultipartUpload take as they are.
var destinationRequestHeaders = []string{"X-Amz-Acl", "X-Amz-Grant-Full-Control", "X-Amz-Grant-Read",
	"X-Amz-Grant-Read-Acp", "X-Amz-Grant-Write-Acp", "X-Amz-Storage-Class", "X-Amz-Website-Redirect-Location",
	"X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
	"X-Amz-Server-Side-Encryption-Context", "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled",
	"X-Amz-Server-Side-Encryption-Customer-Algorithm", "X-Amz-Server-Side-Encryption-Customer-Key",
	"X-Amz-Server-Side-Encryption-Customer-Key-Md5", "X-Amz-Object-Lock-Mode",
	"X-Amz-Object-Lock-Retain-Until-Date", "X-Amz-Object-Lock-Legal-Hold", "X-Amz-Expected-Bucket-Owner",
	"X-Amz-Request-Payer"}

// sourceReadHeader is the header of the copy source's GET: the source's
// SSE-C key and expected owner under the names a GET gives them.
func sourceReadHeader(client http.Header) http.Header {
	h := make(http.Header, 6)
	for name, values := range client {
		switch {
		case strings.HasPrefix(name, "X-Amz-Copy-Source-Server-Side-Encryption-Customer-"):
			h["X-Amz-Server-Side-Encryption-Customer-"+strings.TrimPrefix(name, "X-Amz-Copy-Source-Server-Side-Encryption-Customer-")] = values
		case name == "X-Amz-Source-Expected-Bucket-Owner":
			h["X-Amz-Expected-Bucket-Owner"] = values
		case name == "X-Amz-Request-Payer":
			h[name] = values
		}
	}
	return h
}

// destinationHeader is the header of the write that creates the copy, as
// CopyObject would set the new object: metadata and system headers from
// the source (x-amz-metadata-directive COPY) or the request (REPLACE),
// tags likewise (x-amz-tagging-directive), storage class, ACL,
// encryption and object lock from the request. Checked headers go as
// s3cond parsed them (headergrammar.go).
func (b *Backend) destinationHeader(c *call, source http.Header) (http.Header, error) {
	client := c.r.Header
	h := make(http.Header, 16)
	fromClient := func(name string) {
		if values, ok := c.checkedHeader[name]; ok {
			if len(values) > 0 {
				h[name] = values
			}
			return
		}
		if values, ok := client[name]; ok {
			h[name] = append([]string(nil), values...)
		}
	}
	for _, name := range destinationRequestHeaders {
		fromClient(name)
	}
	metadataFrom := source
	if strings.EqualFold(client.Get("X-Amz-Metadata-Directive"), "REPLACE") {
		metadataFrom = nil
		for _, name := range objectMetadataHeaders {
			fromClient(name)
		}
	} else {
		for _, name := range objectMetadataHeaders {
			if v, ok := source[name]; ok {
				h[name] = v
			}
		}
	}
	userMetadata := client
	if metadataFrom != nil {
		userMetadata = metadataFrom
	}
	for name, values := range userMetadata {
		if strings.HasPrefix(name, "X-Amz-Meta-") {
			h[name] = append([]string(nil), values...)
		}
	}
	if strings.EqualFold(client.Get("X-Amz-Tagging-Directive"), "REPLACE") {
		fromClient("X-Amz-Tagging")
		return h, nil
	}
	if count := source.Get("X-Amz-Tagging-Count"); count != "" && count != "0" {
		tags, err := b.sourceTagging(c.r.Context(), c)
		if err != nil {
			return nil, err
		}
		h.Set("X-Amz-Tagging", tags)
	}
	return h, nil
}

// sourceTagging reads the copy source's tags, in x-amz-tagging's form.
func (b *Backend) sourceTagging(ctx context.Context, c *call) (string, error) {
	src := c.copySource
	rawQuery := "tagging"
	if src.versionID != "" {
		rawQuery += "&versionId=" + strictEscape(src.versionID)
	}
	resp, err := b.send(b.newRequest(ctx, http.MethodGet, src.bucket, escapeKey(src.key), rawQuery, sourceReadHeader(c.r.Header)))
	if err != nil {
		return "", backendError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", s3err.Newf(s3err.BadGateway, "The backend answered GetObjectTagging of the copy source with status %d.", resp.StatusCode)
	}
	tags, err := s3xml.ParseTagging(resp.Body, s3xml.DefaultTaggingLimit)
	if err != nil {
		return "", s3err.Wrap(s3err.BadGateway, err)
	}
	return tags, nil
}
