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
