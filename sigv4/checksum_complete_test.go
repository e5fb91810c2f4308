package sigv4

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

const completeXML = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag></Part></CompleteMultipartUpload>`

// On CompleteMultipartUpload, x-amz-checksum-* is the whole object's
// checksum, full-object or composite ("<base64>-<parts>"); S3 checks it
// against the parts, not against the XML body.
func TestCompleteMultipartUploadChecksumHeadersAreNotBodyChecksums(t *testing.T) {
	objectCRC := crc32Base64([]byte("the whole object, not the XML"))
	cases := map[string]http.Header{
		"full object": {"X-Amz-Checksum-Crc32": {objectCRC}, "X-Amz-Checksum-Type": {"FULL_OBJECT"}},
		"composite":   {"X-Amz-Checksum-Crc32": {objectCRC + "-3"}, "X-Amz-Checksum-Type": {"COMPOSITE"}},
		// x-amz-checksum-type is a setting, signed (the values need not be).
		"with sdk algorithm": {"X-Amz-Checksum-Sha256": {"c29tZXRoaW5n-2"}, "X-Amz-Sdk-Checksum-Algorithm": {"SHA256"}},
	}
	for name, header := range cases {
		t.Run(name, func(t *testing.T) {
			signed := http.Header{}
			if v, ok := header["X-Amz-Checksum-Type"]; ok {
				signed["X-Amz-Checksum-Type"] = v
			}
			r := signedRequest(t, http.MethodPost, "/bucket/key?uploadId=abc", completeXML, signOptions{header: signed})
			for k, v := range header {
				r.Header[k] = v
			}
			got, err := testVerifier().Verify(r)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if _, err := readBody(t, got.Body, 16); err != nil {
				t.Fatalf("XML body refused: %v", err)
			}
			if _, _, ok := got.Body.Checksum(); ok {
				t.Fatal("the object's checksum reported as the body's")
			}
		})
	}

	// The same header on other requests still describes their body.
	for _, target := range []string{"/bucket/key?uploads", "/bucket/key?uploadId=abc&partNumber=1", "/bucket/key"} {
		method := http.MethodPost
		if target != "/bucket/key?uploads" {
			method = http.MethodPut
		}
		t.Run(method+" "+target, func(t *testing.T) {
			r := signedRequest(t, method, target, completeXML, signOptions{})
			r.Header.Set("X-Amz-Checksum-Crc32", objectCRC)
			got, err := testVerifier().Verify(r)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			_, err = readBody(t, got.Body, 16)
			requireCode(t, err, s3err.BadDigest)
		})
	}
}

// A trailer can only describe the body it ends, so it is verified even on
// CompleteMultipartUpload.
func TestObjectChecksumHeadersStillVerifyATrailer(t *testing.T) {
	payload := []byte(completeXML)
	for _, value := range []string{crc32Base64(payload), crc32Base64([]byte("other"))} {
		encoded := encodeStream(payload, streamOptions{chunkSize: minChunkSize, trailers: []string{"x-amz-checksum-crc32:" + value}})
		h := streamingHeader(len(payload), "x-amz-checksum-crc32")
		h.Set("X-Amz-Checksum-Sha256", "b2JqZWN0-2")
		body, err := NewBody(bytes.NewReader(encoded), BodySpec{Mode: PayloadStreamingUnsignedTrailer,
			ContentLength: int64(len(encoded)), Header: h, ObjectChecksumHeaders: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(t, body, 7)
		if value == crc32Base64(payload) {
			if err != nil {
				t.Fatalf("good trailer refused: %v", err)
			}
		} else {
			requireCode(t, err, s3err.BadDigest)
		}
	}
}
