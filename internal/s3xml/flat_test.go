package s3xml

import (
	"strings"
	"testing"
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
