package s3xml

import (
	"strings"
	"testing"
)

func TestListBucketsRoundTrip(t *testing.T) {
	in := `<ListAllMyBucketsResult><Owner><ID>o1</ID></Owner><Buckets>` +
		`<Bucket><Name>alpha</Name><CreationDate>2025-01-01T00:00:00.000Z</CreationDate><Extra>x</Extra></Bucket>` +
		`</Buckets><ContinuationToken>next</ContinuationToken></ListAllMyBucketsResult>`
	list, err := ParseListBuckets([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if list.Owner == nil || list.Owner.ID != "o1" || len(list.Buckets.Bucket) != 1 || list.Buckets.Bucket[0].Name != "alpha" {
		t.Fatalf("parsed %+v", list)
	}
	list.Buckets.Bucket, list.Xmlns = nil, Namespace
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ListAllMyBucketsResult xmlns="` + Namespace +
		`"><Owner><ID>o1</ID></Owner><Buckets></Buckets><ContinuationToken>next</ContinuationToken></ListAllMyBucketsResult>`
	if got := string(list.Marshal()); got != want {
		t.Errorf("marshalled\n%s\nwant\n%s", got, want)
	}
}

func TestListBucketsIsBounded(t *testing.T) {
	for name, doc := range map[string]string{
		"another root":      `<Error><Code>AccessDenied</Code></Error>`,
		"foreign namespace": `<ListAllMyBucketsResult xmlns="urn:other"><Buckets/></ListAllMyBucketsResult>`,
		"too deep":          `<ListAllMyBucketsResult>` + strings.Repeat("<a>", maxDepth) + strings.Repeat("</a>", maxDepth) + `</ListAllMyBucketsResult>`,
		"too large":         `<ListAllMyBucketsResult><Prefix>` + strings.Repeat("x", MaxListBucketsResult) + `</Prefix></ListAllMyBucketsResult>`,
	} {
		if _, err := ParseListBuckets([]byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestElementText(t *testing.T) {
	doc := []byte(`<ListBucketResult><Name>b&amp;c</Name><Prefix>&lt;Name&gt;</Prefix></ListBucketResult>`)
	start, end, found := ElementText(doc, "Name")
	if !found || string(doc[start:end]) != "b&amp;c" {
		t.Errorf("Name: %d..%d %v", start, end, found)
	}
	if _, _, found := ElementText(doc[:30], "Prefix"); found {
		t.Error("found an element cut off by the head's end")
	}
}

func TestRootElement(t *testing.T) {
	for doc, want := range map[string]string{
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ListBucketResult xmlns="x"><Name>b</Name>`: "ListBucketResult",
		`<!-- a store's comment --><s3:ListPartsResult><Bucket>b</Bucket>`:                             "ListPartsResult",
		`<Tagging/>`:                          "Tagging",
		"  \t<InitiateMultipartUploadResult>": "InitiateMultipartUploadResult",
		`not a document`:                      "",
		`<?xml version="1.0"?>`:               "",
	} {
		got, found := RootElement([]byte(doc))
		if got != want || found != (want != "") {
			t.Errorf("RootElement(%q) = %q %v, want %q", doc, got, found, want)
		}
	}
}
