package s3xml

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// checkClientError states that a request parser fails only with a client
// error S3 would send, never a panic or an internal error.
func checkClientError(t *testing.T, err error) {
	t.Helper()
	var e *s3err.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not *s3err.Error", err, err)
	}
	if e.Code != s3err.MalformedXML && e.Code != s3err.InvalidArgument {
		t.Fatalf("unexpected code %s: %v", e.Code, err)
	}
}

func FuzzParseDeleteRequest(f *testing.F) {
	f.Add([]byte(`<Delete><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>a&amp;b</Key><VersionId>v</VersionId><ETag>"e"</ETag></Object></Delete>`))
	f.Add([]byte(deleteBody(5)))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseDeleteRequest(bytes.NewReader(body), 1<<20)
		if err != nil {
			checkClientError(t, err)
			return
		}
		if n := len(req.Objects); n < 1 || n > MaxDeleteObjects {
			t.Fatalf("accepted %d objects", n)
		}
		for _, o := range req.Objects {
			if o.Key == "" {
				t.Fatal("accepted an empty key")
			}
		}
		again, err := ParseDeleteRequest(bytes.NewReader(req.Marshal()), 0)
		if err != nil {
			t.Fatalf("own output rejected: %v\n%s", err, req.Marshal())
		}
		if !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip changed the request\n got %+v\nwant %+v", again, req)
		}
	})
}

// FuzzParseCompleteRequest: a part list is refused with a client error or
// accepted as S3 would accept it, and what s3cond writes for the store
// reads back as the same parts.
func FuzzParseCompleteRequest(f *testing.F) {
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag></Part></CompleteMultipartUpload>`))
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>a</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part><Part><PartNumber>1</PartNumber><ETag>b</ETag></Part></CompleteMultipartUpload>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseCompleteRequest(bytes.NewReader(body), 1<<20)
		if err != nil {
			var e *s3err.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *s3err.Error", err, err)
			}
			switch e.Code {
			case s3err.MalformedXML, s3err.InvalidArgument, s3err.InvalidPartOrder, s3err.InvalidPart, s3err.InvalidRequest:
			default:
				t.Fatalf("unexpected code %s: %v", e.Code, err)
			}
			return
		}
		for i, p := range req.Parts {
			if p.PartNumber < 1 || p.PartNumber > 10000 || i > 0 && p.PartNumber <= req.Parts[i-1].PartNumber {
				t.Fatalf("accepted the parts %+v", req.Parts)
			}
		}
		again, err := ParseCompleteRequest(bytes.NewReader(req.Marshal()), 0)
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("the written list reads back as %+v, %v; want %+v", again, err, req)
		}
	})
}
