package s3xml

import (
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func TestFlatDocumentRoundTrip(t *testing.T) {
	in := "\n  <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>a &amp; b</Message>" +
		"<Nested><Inner>x</Inner></Nested><Key>k</Key></Error>"
	doc, err := ParseFlatDocument([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Root.Local != "Error" || doc.Get("Code") != "NoSuchKey" || doc.Get("Message") != "a & b" || doc.Get("Nested") != "" {
		t.Fatalf("parsed %+v", doc)
	}
	want := `<Error><Code>NoSuchKey</Code><Message>a &amp; b</Message><Key>k</Key></Error>`
	if got := string(doc.Render()); !strings.HasSuffix(got, want) {
		t.Errorf("rendered %s, want it to end in %s", got, want)
	}
	result, err := ParseFlatDocument([]byte(`<CompleteMultipartUploadResult xmlns="` + Namespace + `"><ETag>"e"</ETag></CompleteMultipartUploadResult>`))
	if err != nil || !strings.Contains(string(result.Render()), `<CompleteMultipartUploadResult xmlns="`+Namespace+`">`) {
		t.Errorf("result %s, %v: the namespace should stay", result.Render(), err)
	}
}

// TestFlatDocumentIsBounded: backend documents get the structure bounds of
// every s3xml reader (before, proxy parsed them with none of their own).
func TestFlatDocumentIsBounded(t *testing.T) {
	for name, doc := range map[string]string{
		"too large":         "<Error><Message>" + strings.Repeat("x", MaxBackendDocument) + "</Message></Error>",
		"too deep":          "<Error>" + strings.Repeat("<a>", maxDepth) + strings.Repeat("</a>", maxDepth) + "</Error>",
		"doctype":           `<!DOCTYPE Error [<!ENTITY x "y">]><Error><Code>&x;</Code></Error>`,
		"foreign namespace": `<Error xmlns="urn:other"><Code>c</Code></Error>`,
		"two roots":         `<Error></Error><Error></Error>`,
		"cut short":         `<Error><Code>c</Code>`,
		"not XML":           `<html><body>Bad Gateway</html>`,
	} {
		if _, err := ParseFlatDocument([]byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
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

func TestReadPartsPage(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<IsTruncated>true</IsTruncated><NextPartNumberMarker> 2 </NextPartNumberMarker>` +
		`<Part><PartNumber>1</PartNumber><Size>5242880</Size></Part><Part><PartNumber>2</PartNumber><Size>7</Size></Part></ListPartsResult>`
	page, err := ReadPartsPage(strings.NewReader(doc), 1<<20, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !page.IsTruncated || page.NextPartNumberMarker != "2" || len(page.Sizes) != 2 || page.Sizes[0] != 5<<20 || page.Sizes[1] != 7 {
		t.Fatalf("page %+v", page)
	}
	// moto 5.2 answers ListParts under its model's name for the document.
	moto := strings.ReplaceAll(doc, "ListPartsResult", "ListPartsResponse")
	if page, err := ReadPartsPage(strings.NewReader(moto), 1<<20, 1000); err != nil || len(page.Sizes) != 2 {
		t.Fatalf("moto's ListPartsResponse: %+v, %v", page, err)
	}
	if got, err := ReadUploadChecksum(strings.NewReader(`<ListPartsResponse><ChecksumAlgorithm>CRC32</ChecksumAlgorithm></ListPartsResponse>`)); err != nil || got.Algorithm != "CRC32" {
		t.Fatalf("moto's ListPartsResponse checksum: %+v, %v", got, err)
	}
	for name, bad := range map[string]struct {
		doc      string
		limit    int64
		maxParts int
	}{
		"more parts than asked for": {doc, 1 << 20, 1},
		"larger than the limit":     {doc, 64, 1000},
		"another document":          {`<Error><Code>NoSuchUpload</Code></Error>`, 1 << 20, 1000},
		"not a number":              {`<ListPartsResult><Part><Size>x</Size></Part></ListPartsResult>`, 1 << 20, 1000},
	} {
		if _, err := ReadPartsPage(strings.NewReader(bad.doc), bad.limit, bad.maxParts); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
