package s3xml

import (
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
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

func TestReadUploadChecksum(t *testing.T) {
	got, err := ReadUploadChecksum(strings.NewReader(`<ListPartsResult xmlns="` + Namespace + `"><ChecksumAlgorithm> CRC32 </ChecksumAlgorithm></ListPartsResult>`))
	if err != nil || got.Algorithm != "CRC32" {
		t.Errorf("ListPartsResult: %+v, %v", got, err)
	}
	got, err = ReadUploadChecksum(strings.NewReader(`<Error><Code>NoSuchUpload</Code></Error>`))
	if err != nil || got.Code != "NoSuchUpload" {
		t.Errorf("Error: %+v, %v", got, err)
	}
	_, err = ReadUploadChecksum(strings.NewReader(`<ListPartsResult>` + strings.Repeat(" ", MaxBackendDocument) + `</ListPartsResult>`))
	wantCode(t, err, s3err.BadGateway)
	if _, err := ReadUploadChecksum(strings.NewReader(`<!DOCTYPE x><ListPartsResult/>`)); err == nil {
		t.Error("read a document with a DOCTYPE")
	}
}

func TestParseTagging(t *testing.T) {
	got, err := ParseTagging(strings.NewReader(`<Tagging><TagSet><Tag><Key>a b</Key><Value>1&amp;2</Value></Tag>`+
		`<Tag><Key>c</Key><Value></Value></Tag></TagSet></Tagging>`), 0)
	if err != nil || got != "a+b=1%262&c=" {
		t.Errorf("tags %q, %v", got, err)
	}
	for _, doc := range []string{`<Tagging><TagSet>`, `<Other><TagSet/></Other>`, `<!DOCTYPE t><Tagging/>`,
		`<Tagging>` + strings.Repeat("x", int(DefaultTaggingLimit)) + `</Tagging>`} {
		_, err := ParseTagging(strings.NewReader(doc), 0)
		wantCode(t, err, s3err.MalformedXML)
	}
}
