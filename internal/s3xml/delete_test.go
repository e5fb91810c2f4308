package s3xml

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/s3cond/s3cond/s3err"
)

func TestParseDeleteRequestReadsAWSExample(t *testing.T) {
	got, err := ParseDeleteRequest(strings.NewReader(readTestdata(t, "delete-request.xml")), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := &DeleteRequest{Quiet: true, Objects: []ObjectIdentifier{
		{Key: "sample1.txt"},
		{Key: "sample2.txt", VersionID: "OYcLXagmS.WaD..oyH4KRguB95_YhLs7"},
		{Key: "conditional.txt", ETag: `"9b2cf535f27731c974343645a3985328"`},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestParseDeleteRequestAcceptsNoNamespaceAndKeepsKeysExactly(t *testing.T) {
	body := "<Delete><Object><Key> spaced &amp; &lt;odd&gt;\tkey\n</Key></Object><Object><Key>日本/ключ</Key></Object></Delete>"
	got, err := ParseDeleteRequest(strings.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Quiet {
		t.Error("Quiet defaulted to true")
	}
	if got.Objects[0].Key != " spaced & <odd>\tkey\n" || got.Objects[1].Key != "日本/ключ" {
		t.Fatalf("keys changed: %q", got.Objects)
	}
}

func TestDeleteRequestRoundTrips(t *testing.T) {
	in := &DeleteRequest{Quiet: true, Objects: []ObjectIdentifier{
		{Key: " a&b<c>\"d'\te\r\nf "},
		{Key: "v", VersionID: "3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo"},
		{Key: "e", ETag: `"abc-2"`},
		{Key: "s", Size: "1234", LastModifiedTime: "2026-12-01T16:28:38.000Z"},
	}}
	body := in.Marshal()
	if !bytes.HasPrefix(body, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("no XML declaration: %s", body)
	}
	if !bytes.Contains(body, []byte(`<Delete xmlns="`+Namespace+`">`)) {
		t.Errorf("no S3 namespace: %s", body)
	}
	if bytes.Count(body, []byte("<ETag>")) != 1 || bytes.Count(body, []byte("<VersionId>")) != 1 ||
		bytes.Count(body, []byte("<Size>")) != 1 || bytes.Count(body, []byte("<LastModifiedTime>")) != 1 {
		t.Errorf("empty ETag/VersionId/Size/LastModifiedTime not omitted: %s", body)
	}
	out, err := ParseDeleteRequest(bytes.NewReader(body), 0)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip changed the request\n got %+v\nwant %+v", out, in)
	}
}

func TestParseDeleteRequestEnforcesS3Limits(t *testing.T) {
	if _, err := ParseDeleteRequest(strings.NewReader(deleteBody(MaxDeleteObjects)), 0); err != nil {
		t.Fatalf("1000 keys: %v", err)
	}
	_, err := ParseDeleteRequest(strings.NewReader(deleteBody(MaxDeleteObjects+1)), 0)
	wantCode(t, err, s3err.MalformedXML)
}

// countingReader stands for a client body: it records how much was read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestParseDeleteRequestNeverReadsPastLimit(t *testing.T) {
	const limit = 4096
	body := &countingReader{r: io.MultiReader(strings.NewReader("<Delete>"), neverEnding('x'))}
	_, err := ParseDeleteRequest(body, limit)
	wantCode(t, err, s3err.MalformedXML)
	if body.n > limit+1 {
		t.Fatalf("read %d bytes with limit %d", body.n, limit)
	}
	exact := deleteBody(3)
	if _, err := ParseDeleteRequest(strings.NewReader(exact), int64(len(exact))); err != nil {
		t.Fatalf("body of exactly the limit: %v", err)
	}
	_, err = ParseDeleteRequest(strings.NewReader(exact), int64(len(exact)-1))
	wantCode(t, err, s3err.MalformedXML)
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestParseDeleteRequestRejectsHostileAndInvalidBodies(t *testing.T) {
	tests := map[string]string{
		"empty":                  "",
		"not xml":                "hello",
		"no objects":             "<Delete></Delete>",
		"only quiet":             "<Delete><Quiet>true</Quiet></Delete>",
		"object without key":     "<Delete><Object><VersionId>v</VersionId></Object></Delete>",
		"empty key":              "<Delete><Object><Key></Key></Object></Delete>",
		"wrong root":             "<Remove><Object><Key>a</Key></Object></Remove>",
		"foreign namespace":      `<Delete xmlns="http://example.com/"><Object><Key>a</Key></Object></Delete>`,
		"foreign child ns":       `<Delete><Object><x:Key xmlns:x="http://example.com/">a</x:Key></Object></Delete>`,
		"unclosed":               "<Delete><Object><Key>a</Key></Object>",
		"mismatched tags":        "<Delete><Object><Key>a</Object></Key></Delete>",
		"two roots":              "<Delete><Object><Key>a</Key></Object></Delete><Delete/>",
		"trailing text":          "<Delete><Object><Key>a</Key></Object></Delete>junk",
		"invalid utf-8 in key":   "<Delete><Object><Key>a\xff\xfeb</Key></Object></Delete>",
		"invalid utf-8 in name":  "<Delete><Obj\xffect><Key>a</Key></Obj\xffect></Delete>",
		"control char":           "<Delete><Object><Key>a\x01b</Key></Object></Delete>",
		"undefined entity":       "<Delete><Object><Key>&bogus;</Key></Object></Delete>",
		"doctype":                `<!DOCTYPE Delete [<!ENTITY a "aaaa">]><Delete><Object><Key>&a;</Key></Object></Delete>`,
		"bad quiet":              "<Delete><Quiet>maybe</Quiet><Object><Key>a</Key></Object></Delete>",
		"latin-1 declared":       `<?xml version="1.0" encoding="ISO-8859-1"?><Delete><Object><Key>a</Key></Object></Delete>`,
		"deep nesting":           nested("Delete", 100000),
		"nesting just too deep":  nested("Delete", maxDepth),
		"text outside the root":  "junk<Delete><Object><Key>a</Key></Object></Delete>",
		"comment only":           "<!-- nothing -->",
		"declaration only":       `<?xml version="1.0"?>`,
		"unterminated attribute": `<Delete a="><Object><Key>a</Key></Object></Delete>`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDeleteRequest(strings.NewReader(body), 0)
			if err == nil {
				t.Fatalf("accepted: %+v", got)
			}
			wantCode(t, err, s3err.MalformedXML)
		})
	}
}

func TestParseDeleteRequestToleratesHarmlessVariations(t *testing.T) {
	tests := map[string]string{
		"prefixed s3 namespace": `<s3:Delete xmlns:s3="` + Namespace + `"><s3:Object><s3:Key>a</s3:Key></s3:Object></s3:Delete>`,
		"comments and pi":       `<?xml version="1.0"?><!-- c --><Delete><?pi x?><Object><Key>a</Key></Object></Delete><!-- c -->`,
		"unknown element":       `<Delete><Object><Key>a</Key><LastModifiedTime>2024-01-01T00:00:00Z</LastModifiedTime></Object></Delete>`,
		"nesting within limit":  `<Delete><Object><Key>a</Key></Object>` + strings.Repeat("<a>", maxDepth-1) + strings.Repeat("</a>", maxDepth-1) + `</Delete>`,
		"cdata key":             `<Delete><Object><Key><![CDATA[a]]></Key></Object></Delete>`,
		"quiet with spaces":     `<Delete><Quiet> true </Quiet><Object><Key>a</Key></Object></Delete>`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDeleteRequest(strings.NewReader(body), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Objects) != 1 || got.Objects[0].Key != "a" {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestReadersReportReadErrors(t *testing.T) {
	_, err := ParseDeleteRequest(iotest.ErrReader(io.ErrUnexpectedEOF), 0)
	wantCode(t, err, s3err.IncompleteBody)
	// A verifying body reader (standing for s3cond's SigV4 chunk reader)
	// fails mid-body with its own S3 error, which must survive.
	verifying := io.MultiReader(strings.NewReader("<Delete><Object>"), iotest.ErrReader(s3err.New(s3err.SignatureDoesNotMatch)))
	_, err = ParseDeleteRequest(verifying, 0)
	wantCode(t, err, s3err.SignatureDoesNotMatch)
	_, err = ParseDeleteRequest(iotest.ErrReader(fmt.Errorf("wrapped: %w", s3err.New(s3err.BadDigest))), 0)
	wantCode(t, err, s3err.BadDigest)
	_, err = ParseDeleteResult(iotest.ErrReader(io.ErrUnexpectedEOF), 0)
	wantCode(t, err, s3err.BadGateway)
}

func TestParseDeleteResultReadsAWSExample(t *testing.T) {
	got, err := ParseDeleteResult(strings.NewReader(readTestdata(t, "delete-result.xml")), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := &DeleteResult{
		Deleted: []Deleted{
			{Key: "sample1.txt"},
			{Key: "sample2.txt", VersionID: "OYcLXagmS.WaD..oyH4KRguB95_YhLs7", DeleteMarker: true, DeleteMarkerVersionID: "NeQt5xeFTfgPJD8B4CGWnkSLtluMr11s"},
		},
		Errors: []DeleteError{{Key: "conditional.txt", Code: "PreconditionFailed", Message: "At least one of the pre-conditions you specified did not hold"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestDeleteResultRoundTrips(t *testing.T) {
	in := &DeleteResult{
		Deleted: []Deleted{{Key: "a&b"}, {Key: "m", DeleteMarker: true, DeleteMarkerVersionID: "dm1"}},
		Errors:  []DeleteError{{Key: "<x>", VersionID: "v1", Code: "PreconditionFailed", Message: "At least one of the pre-conditions you specified did not hold"}},
	}
	body := in.Marshal()
	if !bytes.HasPrefix(body, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<DeleteResult xmlns="`+Namespace+`">`)) {
		t.Errorf("missing declaration or namespace: %s", body)
	}
	if bytes.Contains(body, []byte("<DeleteMarker>false")) {
		t.Errorf("false DeleteMarker rendered: %s", body)
	}
	out, err := ParseDeleteResult(bytes.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip changed the result\n got %+v\nwant %+v", out, in)
	}
	empty := (&DeleteResult{}).Marshal()
	if got, err := ParseDeleteResult(bytes.NewReader(empty), 0); err != nil || len(got.Deleted)+len(got.Errors) != 0 {
		t.Fatalf("empty result: %+v %v (%s)", got, err, empty)
	}
}

func TestParseDeleteResultBlamesTheBackend(t *testing.T) {
	for name, body := range map[string]string{
		"garbage":     "<html>oops</html>",
		"truncated":   `<DeleteResult><Deleted><Key>a</Key>`,
		"too many":    "<DeleteResult>" + strings.Repeat("<Deleted><Key>a</Key></Deleted>", MaxDeleteObjects+1) + "</DeleteResult>",
		"over limit":  "<DeleteResult>" + strings.Repeat(" ", int(DefaultDeleteResultLimit)) + "</DeleteResult>",
		"deep":        nested("DeleteResult", 1000),
		"invalid utf": "<DeleteResult><Deleted><Key>\xff</Key></Deleted></DeleteResult>",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseDeleteResult(strings.NewReader(body), 0)
			wantCode(t, err, s3err.BadGateway)
		})
	}
	_, err := ParseDeleteResult(strings.NewReader(`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`), 0)
	wantCode(t, err, "SlowDown")
}
