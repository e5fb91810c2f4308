package postform

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func formRequest(body string, contentLength int64) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "http://s3cond/bucket", strings.NewReader(body))
	r.Header.Set("Content-Type", "multipart/form-data; boundary=XyZ")
	r.ContentLength = contentLength
	return r
}

// readFile reads the file of a form read by Read to its end.
func readFile(t *testing.T, form *Form) (string, error) {
	t.Helper()
	data, err := io.ReadAll(form.File())
	return string(data), err
}

func TestReadPostFormFramings(t *testing.T) {
	cases := map[string]string{
		"a field holding what looks like a delimiter": "--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"x-ignore-note\"\r\n\r\nsee\r\n--XyZnot a delimiter\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n" +
			"line one\r\n--XyZnot a delimiter\r\n--XyZ--\r\n",
		"CRLF, as browsers send it": "--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n" +
			"line one\r\n--XyZnot a delimiter\r\n--XyZ--\r\n",
		"a preamble before the first delimiter": "ignored preamble\r\n--XyZnot yet\r\n--XyZ\r\nContent-Disposition: form-data; name=\"KEY\"\r\n\r\nk\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n" +
			"line one\r\n--XyZnot a delimiter\r\n--XyZ--\r\n",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			form, err := Read(formRequest(body, int64(len(body))))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if form.Fields["key"] != "k" || form.FileName != "a.txt" {
				t.Fatalf("fields %v, file name %q", form.Fields, form.FileName)
			}
			got, err := readFile(t, form)
			if err != nil || got != "line one\r\n--XyZnot a delimiter" {
				t.Fatalf("file %q, %v", got, err)
			}
		})
	}
}

func TestReadPostFormRefusals(t *testing.T) {
	field := func(name, value string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n"
	}
	cases := []struct {
		name   string
		body   string
		length int64 // 0: the body's
		code   s3err.Code
	}{
		{"no file", field("key", "k") + "--XyZ--\r\n", 0, s3err.IncorrectNumberOfFilesInPost},
		{"no Content-Length", field("key", "k"), -1, s3err.MissingContentLength},
		{"fields over 20 KiB", field("key", "k") + field("x-amz-meta-a", strings.Repeat("a", 20<<10)), 0, s3err.MaxPostPreDataLengthExceeded},
		{"a field twice", field("key", "k") + field("Key", "other") + "--XyZ--\r\n", 0, s3err.InvalidArgument},
		{"no parts at all", "key=k", 0, s3err.IncorrectNumberOfFilesInPost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			length := tc.length
			if length == 0 {
				length = int64(len(tc.body))
			}
			if _, err := Read(formRequest(tc.body, length)); !s3err.Is(err, tc.code) {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

func TestPostFileMustEndWhereTheFormSaysItDoes(t *testing.T) {
	head := "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n"
	for name, body := range map[string]string{
		"a field after the file":  head + "data\r\n--XyZ\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\ny\r\n--XyZ--\r\n",
		"no CRLF after the close": head + "data\r\n--XyZ--",
	} {
		t.Run(name, func(t *testing.T) {
			form, err := Read(formRequest(body, int64(len(body))))
			if err != nil {
				return // refused before the file: fine too
			}
			if _, err := readFile(t, form); !s3err.Is(err, s3err.MalformedPOSTRequest) {
				t.Fatalf("reading the file: %v, want MalformedPOSTRequest", err)
			}
		})
	}
}

// S3 replaces ${filename} only when the file part names a file: a part
// without a filename parameter keeps "${filename}" in the key, an empty one
// removes it. The name is taken as sent, path and all.
func TestPostFormFileName(t *testing.T) {
	cases := []struct {
		disposition string
		name        string
		has         bool
	}{
		{`form-data; name="file"; filename="a.txt"`, "a.txt", true},
		{`form-data; name="file"; filename="dir/a b.txt"`, "dir/a b.txt", true},
		{`form-data; name="file"; filename=""`, "", true},
		{`form-data; name="file"`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.disposition, func(t *testing.T) {
			body := "--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk/${filename}\r\n" +
				"--XyZ\r\nContent-Disposition: " + tc.disposition + "\r\n\r\ndata\r\n--XyZ--\r\n"
			form, err := Read(formRequest(body, int64(len(body))))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if form.FileName != tc.name || form.HasFileName != tc.has {
				t.Fatalf("file name %q (given: %v), want %q (%v)", form.FileName, form.HasFileName, tc.name, tc.has)
			}
		})
	}
}
