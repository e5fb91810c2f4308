package proxy

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// serveListBuckets forwards ListBuckets and answers with only the buckets
// the key is granted, under the names the client uses for them. Paging
// (max-buckets, continuation-token) is the backend's: a page may come back
// shorter, or empty with a continuation token, as S3 allows.
func (p *Proxy) serveListBuckets(c *call) {
	req, _, err := p.outboundRequest(c, p.clientBody(c))
	if err != nil {
		p.fail(c, err)
		return
	}
	// The answer is parsed, so it must not come compressed.
	req.Header.Del("Accept-Encoding")
	prefix := req.URL.Query().Get("prefix")
	if prefix != "" && len(c.backend.Buckets) > 0 {
		// The prefix is of client names; the backend's names may differ,
		// so filter here instead.
		q := req.URL.Query()
		q.Del("prefix")
		req.URL.RawQuery = q.Encode()
	} else {
		prefix = ""
	}
	resp, err := c.backend.Client.Do(req)
	if err != nil {
		p.fail(c, backendError(err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The one rewriting path (relay.go): a store's error names s3cond's
		// backend request and key like any other operation's.
		p.relayRewritten(c, resp)
		return
	}
	body, err := p.filterBucketList(c, resp.Body, prefix)
	if err != nil {
		p.fail(c, err)
		return
	}
	clientResponseHeader(c, c.w.Header(), resp.Header)
	for _, h := range []string{"Content-Encoding", "Content-Md5", "Etag", "Transfer-Encoding"} {
		c.w.Header().Del(h)
	}
	c.w.Header().Set("Content-Type", "application/xml")
	c.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(body)
}

// filterBucketList reads the backend's ListAllMyBucketsResult and encodes
// it again with only the buckets the call's key may read.
func (p *Proxy) filterBucketList(c *call, r io.Reader, prefix string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, s3xml.MaxListBucketsResult+1))
	if err != nil {
		return nil, backendError(err)
	}
	if len(data) > s3xml.MaxListBucketsResult {
		return nil, s3err.Newf(s3err.BadGateway, "The backend's bucket list is larger than s3cond reads.")
	}
	list, err := s3xml.ParseListBuckets(data)
	if err != nil {
		return nil, s3err.Wrap(s3err.BadGateway, fmt.Errorf("parse the backend's ListBuckets answer: %w", err))
	}
	clientNames := clientBucketNames(c.backend)
	var kept []s3xml.ListedBucket
	for _, b := range list.Buckets.Bucket {
		for _, name := range clientNames(b.Name) {
			if p.listable(c, name, prefix) {
				b.Name = name
				kept = append(kept, b)
			}
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	list.Buckets.Bucket, list.Xmlns, list.Prefix = kept, s3xml.Namespace, ""
	if list.Owner != nil {
		rename := toClientIdentity(c)
		if id, ok := rename(list.Owner.ID); ok {
			list.Owner.ID = id
		}
		if name, ok := rename(list.Owner.DisplayName); ok {
			list.Owner.DisplayName = name
		}
	}
	if q := c.r.URL.Query(); q.Has("prefix") {
		list.Prefix = q.Get("prefix")
	}
	return list.Marshal(), nil
}

// listable reports whether the client sees bucket (a client name) in its
// list: granted to its key for reading, served by the backend that was
// asked, not reserved, and under the prefix.
func (p *Proxy) listable(c *call, bucket, prefix string) bool {
	return strings.HasPrefix(bucket, prefix) && !operation.IsReservedBucket(bucket) &&
		p.backendFor(bucket) == c.backend && p.access.Allowed(c.auth.AccessKeyID, bucket, false)
}

// clientBucketNames returns the function mapping a backend bucket name to
// the client names listed for it: those backend.buckets maps to it, else
// the name itself, unless backend.buckets maps that name to another bucket.
func clientBucketNames(b *Backend) func(backendName string) []string {
	byBackend := make(map[string][]string, len(b.Buckets))
	for client, backend := range b.Buckets {
		byBackend[backend] = append(byBackend[backend], client)
	}
	return func(name string) []string {
		if names, ok := byBackend[name]; ok {
			return names
		}
		if _, mapped := b.Buckets[name]; mapped {
			return nil
		}
		return []string{name}
	}
}
