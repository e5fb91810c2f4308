package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 23: CompleteMultipartUpload's part list was relayed as sent. The
// store now reads the document s3cond wrote from the parts it checked, and
// a list S3 refuses never reaches it.
func TestCompleteBodyReachesTheStoreRewritten(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	sent := `<?xml version="1.0"?><!-- a comment --><CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Part><PartNumber>0001</PartNumber><ETag>"0cc175b9c0f1b6a831c399e269772661"</ETag><Unknown>../x</Unknown></Part>` +
		`</CompleteMultipartUpload>`
	status, body := v.do(t, testKeyID, http.MethodPost, "/"+bucketName+"/k?uploadId=u-1", nil, []byte(sent))
	got := v.store.take()
	if status != http.StatusOK || len(got) != 1 {
		t.Fatalf("%d %s, %d store requests", status, body, len(got))
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Part><ETag>&#34;0cc175b9c0f1b6a831c399e269772661&#34;</ETag><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>`
	if stored := string(v.store.bodyOf(got[0])); stored != want {
		t.Errorf("the store read\n%s\nwant\n%s", stored, want)
	}
	if got[0].ContentLength != int64(len(want)) {
		t.Errorf("Content-Length %d for a body of %d", got[0].ContentLength, len(want))
	}
}

func TestHostileCompleteBodyNeverReachesTheStore(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	part := func(n, etag string) string {
		return "<Part><PartNumber>" + n + "</PartNumber><ETag>" + etag + "</ETag></Part>"
	}
	for _, tc := range []struct{ name, body, code string }{
		{"duplicated part", part("1", "a") + part("1", "b"), "InvalidPartOrder"},
		{"descending parts", part("3", "a") + part("2", "b"), "InvalidPartOrder"},
		{"part 0", part("0", "a"), "InvalidArgument"},
		{"ETag with a path", part("1", "../../../../victim/1"), "InvalidPart"},
		{"two part numbers", "<Part><PartNumber>1</PartNumber><PartNumber>9</PartNumber><ETag>a</ETag></Part>", "MalformedXML"},
		{"no parts", "", "MalformedXML"},
	} {
		doc := "<CompleteMultipartUpload>" + tc.body + "</CompleteMultipartUpload>"
		status, answer := v.do(t, testKeyID, http.MethodPost, "/"+bucketName+"/k?uploadId=u-1", nil, []byte(doc))
		if status != http.StatusBadRequest || !strings.Contains(answer, "<Code>"+tc.code+"</Code>") {
			t.Errorf("%s: %d %s, want 400 %s", tc.name, status, answer, tc.code)
		}
		if got := v.store.take(); len(got) != 0 {
			t.Errorf("%s reached the store", tc.name)
		}
	}
}
