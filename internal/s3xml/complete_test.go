package s3xml

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/s3err"
)

func TestParseCompleteRequestReadsAWSExample(t *testing.T) {
	got, err := ParseCompleteRequest(strings.NewReader(readTestdata(t, "complete-request.xml")), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := &CompleteRequest{Parts: []CompletedPart{
		{PartNumber: 1, ETag: `"a54357aff0632cce46d942af68356b38"`},
		{PartNumber: 2, ETag: `"0c78aef83f66abc1fa1e8477f296d394"`, ChecksumCRC32: "i9Zmsg=="},
		{PartNumber: 3, ETag: `"acbd18db4cc2f85cedef654fccc4a4d8"`, ChecksumSHA256: "LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564="},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestCompleteRequestRoundTrips(t *testing.T) {
	in := &CompleteRequest{Parts: []CompletedPart{
		{PartNumber: 1, ETag: `"a"`, ChecksumCRC32: "AAAAAA==", ChecksumCRC32C: "BBBBBB==", ChecksumCRC64NVME: "CCCCCCCCCCC=", ChecksumSHA1: "sha1", ChecksumSHA256: "sha256"},
		{PartNumber: 10000, ETag: "bare"},
	}}
	body := in.Marshal()
	if !bytes.Contains(body, []byte(`<CompleteMultipartUpload xmlns="`+Namespace+`">`)) {
		t.Errorf("no namespace: %s", body)
	}
	if bytes.Count(body, []byte("<ChecksumCRC32>")) != 1 {
		t.Errorf("empty checksums not omitted: %s", body)
	}
	out, err := ParseCompleteRequest(bytes.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip changed the request\n got %+v\nwant %+v", out, in)
	}
}

func TestParseCompleteRequestEnforcesS3Limits(t *testing.T) {
	parts := func(n int) string {
		var b strings.Builder
		b.WriteString("<CompleteMultipartUpload>")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, `<Part><PartNumber>%d</PartNumber><ETag>"e"</ETag></Part>`, i)
		}
		b.WriteString("</CompleteMultipartUpload>")
		return b.String()
	}
	got, err := ParseCompleteRequest(strings.NewReader(parts(MaxParts)), 0)
	if err != nil || len(got.Parts) != MaxParts {
		t.Fatalf("10000 parts: %v", err)
	}
	_, err = ParseCompleteRequest(strings.NewReader(parts(MaxParts+1)), 0)
	wantCode(t, err, s3err.MalformedXML)
	_, err = ParseCompleteRequest(strings.NewReader(parts(3)), 20)
	wantCode(t, err, s3err.MalformedXML)
}

func TestParseCompleteRequestRejectsInvalidBodies(t *testing.T) {
	tests := []struct {
		name, body string
		code       s3err.Code
	}{
		{"empty", "", s3err.MalformedXML},
		{"no parts", "<CompleteMultipartUpload/>", s3err.MalformedXML},
		{"wrong root", `<Complete><Part><PartNumber>1</PartNumber><ETag>e</ETag></Part></Complete>`, s3err.MalformedXML},
		{"non-numeric part", `<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.MalformedXML},
		{"overflowing part", `<CompleteMultipartUpload><Part><PartNumber>99999999999999999999</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.MalformedXML},
		{"no etag", `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>`, s3err.MalformedXML},
		{"invalid utf-8", "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\xc3\x28</ETag></Part></CompleteMultipartUpload>", s3err.MalformedXML},
		{"deep", nested("CompleteMultipartUpload", 5000), s3err.MalformedXML},
		{"foreign namespace", `<CompleteMultipartUpload xmlns="urn:x"><Part><PartNumber>1</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.MalformedXML},
		{"no part number", `<CompleteMultipartUpload><Part><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.InvalidArgument},
		{"part zero", `<CompleteMultipartUpload><Part><PartNumber>0</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.InvalidArgument},
		{"part 10001", `<CompleteMultipartUpload><Part><PartNumber>10001</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.InvalidArgument},
		{"negative part", `<CompleteMultipartUpload><Part><PartNumber>-1</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`, s3err.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCompleteRequest(strings.NewReader(tt.body), 0)
			if err == nil {
				t.Fatalf("accepted: %+v", got)
			}
			wantCode(t, err, tt.code)
		})
	}
}

func TestParseCompleteResultReadsAWSExample(t *testing.T) {
	got, err := ParseCompleteResult(strings.NewReader(readTestdata(t, "complete-result.xml")), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := &CompleteResult{
		Bucket:   "Example-Bucket",
		Key:      "Example-Object",
		ETag:     `"3858f62230ac3c915f300c664312c11f-9"`,
		Location: "http://Example-Bucket.s3.us-east-1.amazonaws.com/Example-Object",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestParseCompleteResultReportsErrorSentWith200(t *testing.T) {
	_, err := ParseCompleteResult(strings.NewReader(readTestdata(t, "complete-error-200.xml")), 0)
	wantCode(t, err, s3err.InternalError)
	if e := err.(*s3err.Error); e.Message != "We encountered an internal error. Please try again." {
		t.Fatalf("message %q", e.Message)
	}
	_, err = ParseCompleteResult(strings.NewReader(`<Error><Code>InvalidPart</Code><Message>One or more of the specified parts could not be found.</Message></Error>`), 0)
	wantCode(t, err, "InvalidPart")
	_, err = ParseCompleteResult(strings.NewReader(`<Error><Message>no code</Message></Error>`), 0)
	wantCode(t, err, s3err.InternalError)
}

func TestParseCompleteResultBlamesTheBackend(t *testing.T) {
	for name, body := range map[string]string{
		"empty":      "",
		"no etag":    `<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>k</Key></CompleteMultipartUploadResult>`,
		"wrong root": `<InitiateMultipartUploadResult><ETag>"e"</ETag></InitiateMultipartUploadResult>`,
		"truncated":  `<CompleteMultipartUploadResult><ETag>"e"</ETag>`,
		"over limit": `<CompleteMultipartUploadResult><ETag>"e"</ETag>` + strings.Repeat(" ", int(DefaultSmallResultLimit)) + `</CompleteMultipartUploadResult>`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseCompleteResult(strings.NewReader(body), 0)
			wantCode(t, err, s3err.BadGateway)
		})
	}
}

func TestParseCopyResult(t *testing.T) {
	got, err := ParseCopyResult(strings.NewReader(readTestdata(t, "copy-result.xml")), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := &CopyObjectResult{ETag: `"9b2cf535f27731c974343645a3985328"`, LastModified: "2009-10-28T22:32:00.000Z"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	noNamespace := `<CopyObjectResult><ETag>&quot;e&quot;</ETag><ChecksumCRC32>x</ChecksumCRC32></CopyObjectResult>`
	if got, err := ParseCopyResult(strings.NewReader(noNamespace), 0); err != nil || got.ETag != `"e"` {
		t.Fatalf("got %+v, %v", got, err)
	}
	_, err = ParseCopyResult(strings.NewReader(`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`), 0)
	wantCode(t, err, "SlowDown")
	_, err = ParseCopyResult(strings.NewReader(`<CopyObjectResult><LastModified>x</LastModified></CopyObjectResult>`), 0)
	wantCode(t, err, s3err.BadGateway)
	_, err = ParseCopyResult(strings.NewReader(`<CopyPartResult><ETag>"e"</ETag></CopyPartResult>`), 0)
	wantCode(t, err, s3err.BadGateway)
}
