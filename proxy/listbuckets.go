package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
)

// serveListBuckets answers ListBuckets with only the buckets the key is
// granted, under the names the client uses for them, paged by s3cond
// (listbucketspages.go).
func (p *Proxy) serveListBuckets(c *call) {
	paging, err := bucketPaging(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	req, _, err := p.outboundRequest(c, p.clientBody(c))
	if err != nil {
		p.fail(c, err)
		return
	}
	// The answer is parsed, so it must not come compressed.
	req.Header.Del("Accept-Encoding")
	prefix := c.query.Get("prefix")
	storePrefix := prefix
	if len(c.backend.Buckets) > 0 {
		// The prefix is of client names; the backend's names may differ,
		// so filter here instead.
		storePrefix = ""
	}
	list, failed, err := p.readStoreBuckets(c, req, storePrefix)
	if err != nil {
		p.fail(c, err)
		return
	}
	if failed != nil {
		defer failed.Body.Close()
		// The one rewriting path (relay.go): a store's error names s3cond's
		// backend request and key like any other operation's.
		p.relayRewritten(c, failed)
		return
	}
	p.writeBucketList(c, list, paging, prefix)
}

// writeBucketList answers with the client's page of the visible list.
func (p *Proxy) writeBucketList(c *call, list *s3xml.ListBucketsResult, paging listBucketsPaging, prefix string) {
	list.Buckets.Bucket, list.ContinuationToken = paging.page(p.visibleBuckets(c, list, prefix))
	list.Xmlns, list.Prefix = s3xml.Namespace, ""
	if c.parsedQuery.Has("prefix") {
		list.Prefix = prefix
	}
	if list.Owner != nil {
		rename := toClientIdentity(c)
		if id, ok := rename(list.Owner.ID); ok {
			list.Owner.ID = id
		}
		if name, ok := rename(list.Owner.DisplayName); ok {
			list.Owner.DisplayName = name
		}
	}
	body := list.Marshal()
	h := c.w.Header()
	clientResponseHeader(c, h, http.Header{}) // the store's pages' headers describe its pages
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(body)
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
