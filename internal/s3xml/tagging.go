package s3xml

import (
	"io"
	"net/url"
)

// DefaultTaggingLimit is the body limit of a tagging document when a
// reader is given limit <= 0: ten tags of S3's longest keys and values,
// escaped, fit well within it.
const DefaultTaggingLimit int64 = 64 << 10

// ParseTagging reads a tagging document of at most limit bytes
// (<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag>...), as a POST
// Object form's tagging field carries it, into PutObject's x-amz-tagging
// form (k=v&...). The tags are not counted: the store answers for more
// than S3's ten, as it does for a PutObject's header.
func ParseTagging(r io.Reader, limit int64) (string, error) {
	var tagging struct {
		Tags []struct {
			Key   string `xml:"Key"`
			Value string `xml:"Value"`
		} `xml:"TagSet>Tag"`
	}
	if err := parseRequest(r, limit, DefaultTaggingLimit, shape{roots: []string{"Tagging"}}, &tagging); err != nil {
		return "", err
	}
	values := url.Values{}
	for _, t := range tagging.Tags {
		values.Add(t.Key, t.Value)
	}
	return values.Encode(), nil
}
