package proxy

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// ListBuckets pages with s3cond's own continuation tokens over the list the
// key may see. The store's pages and tokens are over every bucket it holds:
// relayed, a store's token (versitygw's is the next bucket's name) told a
// key granted one bucket the names of others, and under backend.buckets the
// store's names. So s3cond reads the store's whole list (following its
// tokens), keeps what the key may read under the client's names, and pages
// that itself; its token is the last client name it listed, which the
// client has seen.

// maxStoreBucketPages bounds the store pages one ListBuckets reads: S3
// pages 10,000 buckets at most, so this is a million buckets.
const maxStoreBucketPages = 100

// defaultBucketPage is the page S3 answers without max-buckets.
const defaultBucketPage = 10000

// listBucketsToken is s3cond's continuation token after the client bucket
// name last: opaque to clients, as S3's is.
func listBucketsToken(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(last))
}

// parseListBucketsToken reads a token listBucketsToken made; ok is false
// for anything else.
func parseListBucketsToken(token string) (last string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) == 0 || !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}

// listBucketsPaging is the page a client asked for.
type listBucketsPaging struct {
	after string // list names after this one ("" from the start)
	size  int
}

// bucketPaging reads the call's checked max-buckets and
// continuation-token.
func bucketPaging(c *call) (listBucketsPaging, error) {
	paging := listBucketsPaging{size: defaultBucketPage}
	if v := c.query.Get("max-buckets"); v != "" {
		paging.size, _ = strconv.Atoi(v) // checked: 1-10000
	}
	if token := c.query.Get("continuation-token"); token != "" {
		last, ok := parseListBucketsToken(token)
		if !ok {
			return paging, invalidContinuationToken("continuation-token", token)
		}
		paging.after = last
	}
	return paging, nil
}

// storeBucketQuery is the store's query: the client's prefix when the
// store's names are the client's, no paging of the client's.
// Values are encoded as checkQuery encodes them (strictEscape: no '+' a
// store could read as a space).
func storeBucketQuery(prefix, token string) string {
	var q []string
	if token != "" {
		q = append(q, "continuation-token="+strictEscape(token))
	}
	if prefix != "" {
		q = append(q, "prefix="+strictEscape(prefix))
	}
	return strings.Join(q, "&")
}

// readStoreBuckets reads every page of the store's list. A first answer
// other than 200 is returned for relaying; a later one fails the call.
func (p *Proxy) readStoreBuckets(c *call, req *http.Request, prefix string) (*s3xml.ListBucketsResult, *http.Response, error) {
	var all *s3xml.ListBucketsResult
	token := ""
	for page := 0; ; page++ {
		if page == maxStoreBucketPages {
			return nil, nil, s3err.Newf(s3err.BadGateway, "The backend's bucket list has more than %d pages.", maxStoreBucketPages)
		}
		req.URL.RawQuery = storeBucketQuery(prefix, token)
		resp, err := c.backend.Client.Do(req.Clone(c.r.Context()))
		if err != nil {
			return nil, nil, backendError(err)
		}
		if resp.StatusCode != http.StatusOK {
			if page == 0 {
				return nil, resp, nil
			}
			resp.Body.Close()
			return nil, nil, s3err.Newf(s3err.BadGateway, "The backend answered %d to a ListBuckets page.", resp.StatusCode)
		}
		list, err := readBucketPage(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		if all == nil {
			all = list
		} else {
			all.Buckets.Bucket = append(all.Buckets.Bucket, list.Buckets.Bucket...)
		}
		if list.ContinuationToken == "" || list.ContinuationToken == token {
			all.ContinuationToken = ""
			return all, nil, nil
		}
		token = list.ContinuationToken
	}
}

func readBucketPage(r io.Reader) (*s3xml.ListBucketsResult, error) {
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
	return list, nil
}

// visibleBuckets is the store's list as the key sees it: the buckets it
// may read, under the client's names, sorted by name.
func (p *Proxy) visibleBuckets(c *call, list *s3xml.ListBucketsResult, prefix string) []s3xml.ListedBucket {
	clientNames := clientBucketNames(c.backend)
	var kept []s3xml.ListedBucket
	for _, b := range list.Buckets.Bucket {
		for _, name := range clientNames(b.Name) {
			if p.listable(c, name, prefix) {
				listed := b
				listed.Name = name
				if name != b.Name {
					listed.BucketArn = "" // it names the store's bucket
				}
				kept = append(kept, listed)
			}
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	return kept
}

// page cuts one page out of the sorted visible list, and the token of the
// next ("" when it is the last).
func (pg listBucketsPaging) page(kept []s3xml.ListedBucket) ([]s3xml.ListedBucket, string) {
	from := sort.Search(len(kept), func(i int) bool { return kept[i].Name > pg.after })
	kept = kept[from:]
	if len(kept) <= pg.size {
		return kept, ""
	}
	kept = kept[:pg.size]
	return kept, listBucketsToken(kept[len(kept)-1].Name)
}
