package s3xml

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func TestParseCompleteRequestRewritesTheCheckedParts(t *testing.T) {
	body := `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Part><PartNumber> 01 </PartNumber><ETag>"0cc175b9c0f1b6a831c399e269772661"</ETag><Extra>ignored</Extra></Part>
  <Part><ETag>abc-2</ETag><PartNumber>7</PartNumber><ChecksumCRC32>AAAAAA==</ChecksumCRC32>
    <ChecksumSHA256>47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=</ChecksumSHA256></Part>
</CompleteMultipartUpload>`
	req, err := ParseCompleteRequest(strings.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Part><ETag>&#34;0cc175b9c0f1b6a831c399e269772661&#34;</ETag><PartNumber>1</PartNumber></Part>` +
		`<Part><ChecksumCRC32>AAAAAA==</ChecksumCRC32><ChecksumSHA256>47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=</ChecksumSHA256>` +
		`<ETag>abc-2</ETag><PartNumber>7</PartNumber></Part></CompleteMultipartUpload>`
	if got := string(req.Marshal()); got != want {
		t.Fatalf("rewritten body\n got %s\nwant %s", got, want)
	}
	again, err := ParseCompleteRequest(strings.NewReader(want), 0)
	if err != nil || len(again.Parts) != 2 || again.Parts[0] != req.Parts[0] || again.Parts[1] != req.Parts[1] {
		t.Fatalf("the rewritten body does not read back as the same parts: %+v, %v", again, err)
	}
}

func TestParseCompleteRequestRefusesAsS3Does(t *testing.T) {
	part := func(n, etag string) string {
		return "<Part><PartNumber>" + n + "</PartNumber><ETag>" + etag + "</ETag></Part>"
	}
	doc := func(parts ...string) string {
		return "<CompleteMultipartUpload>" + strings.Join(parts, "") + "</CompleteMultipartUpload>"
	}
	tooMany := make([]string, MaxCompleteParts+1)
	for i := range tooMany {
		tooMany[i] = part("1", "e")
	}
	cases := []struct {
		name, body string
		code       s3err.Code
	}{
		{"not XML", "<CompleteMultipartUpload><Part>", s3err.MalformedXML},
		{"other root", "<Delete>" + part("1", "e") + "</Delete>", s3err.MalformedXML},
		{"no parts", doc(), s3err.MalformedXML},
		{"more than 10000 parts", doc(tooMany...), s3err.MalformedXML},
		{"no PartNumber", doc("<Part><ETag>e</ETag></Part>"), s3err.MalformedXML},
		{"no ETag", doc("<Part><PartNumber>1</PartNumber></Part>"), s3err.MalformedXML},
		{"two PartNumbers", doc("<Part><PartNumber>1</PartNumber><PartNumber>2</PartNumber><ETag>e</ETag></Part>"), s3err.MalformedXML},
		{"two ETags", doc("<Part><PartNumber>1</PartNumber><ETag>e</ETag><ETag>f</ETag></Part>"), s3err.MalformedXML},
		{"doctype", `<!DOCTYPE x [<!ENTITY a "b">]>` + doc(part("1", "e")), s3err.MalformedXML},
		{"part 0", doc(part("0", "e")), s3err.InvalidArgument},
		{"part 10001", doc(part("10001", "e")), s3err.InvalidArgument},
		{"negative part", doc(part("-1", "e")), s3err.InvalidArgument},
		{"part with a sign", doc(part("+1", "e")), s3err.InvalidArgument},
		{"descending", doc(part("2", "e"), part("1", "e")), s3err.InvalidPartOrder},
		{"duplicated", doc(part("1", "e"), part("1", "e")), s3err.InvalidPartOrder},
		{"ETag with a path", doc(part("1", "../../victim")), s3err.InvalidPart},
		{"ETag with a backslash", doc(part("1", `a\b`)), s3err.InvalidPart},
		{"ETag with a control byte", doc(part("1", "a&#10;b")), s3err.InvalidPart},
		{"empty ETag", doc(part("1", `""`)), s3err.InvalidPart},
		{"long ETag", doc(part("1", strings.Repeat("a", 257))), s3err.InvalidPart},
		{"short CRC32", doc("<Part><PartNumber>1</PartNumber><ETag>e</ETag><ChecksumCRC32>AAA=</ChecksumCRC32></Part>"), s3err.InvalidArgument},
		{"SHA256 of 31 bytes", doc("<Part><PartNumber>1</PartNumber><ETag>e</ETag><ChecksumSHA256>" + strings.Repeat("A", 42) + "=</ChecksumSHA256></Part>"), s3err.InvalidArgument},
		{"checksum not base64", doc("<Part><PartNumber>1</PartNumber><ETag>e</ETag><ChecksumSHA1>../../../../../../../../../x=</ChecksumSHA1></Part>"), s3err.InvalidArgument},
		{"checksum twice", doc("<Part><PartNumber>1</PartNumber><ETag>e</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>"), s3err.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCompleteRequest(strings.NewReader(tc.body), 0)
			var s3e *s3err.Error
			if !errors.As(err, &s3e) || s3e.Code != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
}

func TestParseCompleteRequestIsBounded(t *testing.T) {
	body := "<CompleteMultipartUpload>" + strings.Repeat(" ", 1024) + "</CompleteMultipartUpload>"
	_, err := ParseCompleteRequest(strings.NewReader(body), 512)
	var s3e *s3err.Error
	if !errors.As(err, &s3e) || s3e.Code != s3err.MalformedXML || !errors.Is(err, errTooLarge) {
		t.Fatalf("got %v, want MalformedXML for a body over its limit", err)
	}
}

func TestParseCompleteRequestKeepsEveryChecksumAlgorithm(t *testing.T) {
	// S3's ChecksumAlgorithm has ten members; each part checksum must reach
	// the store, which refuses a Complete whose part lacks the upload's.
	elements := []struct {
		name string
		size int
	}{
		{"ChecksumSHA512", 64}, {"ChecksumMD5", 16}, {"ChecksumXXHASH64", 8},
		{"ChecksumXXHASH3", 8}, {"ChecksumXXHASH128", 16},
	}
	for _, e := range elements {
		value := base64.StdEncoding.EncodeToString(make([]byte, e.size))
		body := "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>e</ETag><" + e.name + ">" +
			value + "</" + e.name + "></Part></CompleteMultipartUpload>"
		req, err := ParseCompleteRequest(strings.NewReader(body), 0)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if got := string(req.Marshal()); !strings.Contains(got, "<"+e.name+">"+value+"</"+e.name+">") {
			t.Fatalf("%s dropped from the rewritten body: %s", e.name, got)
		}
		short := strings.Replace(body, value, base64.StdEncoding.EncodeToString(make([]byte, e.size-1)), 1)
		if _, err := ParseCompleteRequest(strings.NewReader(short), 0); err == nil {
			t.Fatalf("%s of %d bytes accepted", e.name, e.size-1)
		}
	}
}
