package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// The value allow-list for the request headers a store reads as numbers or
// ranges, and (settingheaders.go) those that change what it does;
// x-amz-copy-source has its own parser (copysource.go). Go's server
// has already refused control bytes in any header value. Each checked
// header is sent on rebuilt from its parsed value (outboundRequest), never
// as the client's bytes.

const copySourceRangeHeader = "x-amz-copy-source-range"

// headerGrammar is one row: the header's check, and what it sends on.
type headerGrammar struct {
	name string // as S3's errors name it
	// key is the canonical header key, computed once: checkHeaders runs on
	// every request.
	key string
	// parse returns the value to send on, or S3's error.
	parse func(value string) (string, *s3err.Error)
}

var headerGrammars = append([]headerGrammar{
	{copySourceRangeHeader, "X-Amz-Copy-Source-Range", parseCopySourceRange},
	// GetObjectAttributes pages its parts by header.
	{"x-amz-max-parts", "X-Amz-Max-Parts", headerInt(0, maxS3Int)},
	{"x-amz-part-number-marker", "X-Amz-Part-Number-Marker", headerInt(0, maxS3Int)},
}, settingHeaderGrammars...)

// entityTagLists are the headers HTTP lets a client split over lines.
var entityTagLists = map[string]bool{
	"If-Match": true, "If-None-Match": true, "X-Amz-Copy-Source-If-Match": true, "X-Amz-Copy-Source-If-None-Match": true,
}

// checkHeaders applies headerGrammars to h: each header present must be
// given once and parse. It returns the outbound values (nil when none of
// these headers is present); an empty value there means the header is not
// sent at all.
func checkHeaders(h http.Header) (http.Header, error) {
	out, err := checkObjectHeaders(h)
	if err != nil {
		return nil, err
	}
	for _, g := range headerGrammars {
		values, present := h[g.key]
		if !present {
			continue
		}
		value := values[0]
		switch {
		case len(values) > 1 && entityTagLists[g.key]:
			value = strings.Join(values, ",") // one list, as HTTP reads it
		case len(values) != 1:
			return nil, argumentError("The header "+g.name+" is given more than once", g.name, values[0])
		}
		sent, err := g.parse(value)
		if err != nil {
			if err.Code != s3err.InvalidArgument {
				return nil, err // S3 names no argument in InvalidTag, InvalidDigest, ...
			}
			return nil, argumentError(err.Message, g.name, value)
		}
		if out == nil {
			out = http.Header{}
		}
		switch {
		case sent == "":
			out[g.key] = nil
		case sent == values[0] && len(values) == 1:
			out[g.key] = values[:1:1] // as sent: the client's value, not a copy
		default:
			out[g.key] = []string{sent}
		}
	}
	return out, nil
}

// parseCopySourceRange reads UploadPartCopy's "bytes=first-last", both
// offsets given and first <= last, as S3 requires.
func parseCopySourceRange(v string) (string, *s3err.Error) {
	bad := s3err.Newf(s3err.InvalidArgument, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return "", bad
	}
	rawFirst, rawLast, ok := strings.Cut(spec, "-")
	first, okFirst := parseDecimal(rawFirst)
	last, okLast := parseDecimal(rawLast)
	if !ok || !okFirst || !okLast || first > last {
		return "", bad
	}
	return "bytes=" + strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10), nil
}

func headerInt(lo, hi int64) func(string) (string, *s3err.Error) {
	return func(v string) (string, *s3err.Error) {
		n, ok := parseDecimal(v)
		if !ok || n < lo || n > hi {
			return "", s3err.Newf(s3err.InvalidArgument, "The header's value is not an integer or not within integer range")
		}
		return strconv.FormatInt(n, 10), nil
	}
}
