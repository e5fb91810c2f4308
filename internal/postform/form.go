// Package postform reads a POST Object request (S3's browser-based upload):
// the multipart/form-data form up to its file (form.go), the PutObject
// headers its fields ask for (headers.go), and the POST policy's document
// and conditions (policy.go), which proxy checks once sigv4 has verified
// the policy's signature. Nothing here knows the request's call:
// proxy/postobject.go authorises the upload and stores the file as a
// PutObject.
package postform

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// Limits on what precedes the file in a POST Object form. S3 allows 20 KB
// of fields before the file; the raw limit also bounds part headers and
// boundaries, which the field limit does not count.
const (
	maxPostFieldBytes    = 20 << 10
	maxPostPreambleBytes = 64 << 10
)

// Form is a POST Object request read up to the start of its file.
type Form struct {
	// Fields are the form fields before the file, by lower-case name.
	Fields map[string]string
	// file streams the file's bytes; FileName is the name the browser gave
	// (the part's filename parameter as sent), HasFileName whether it gave
	// one at all.
	file        io.Reader
	FileName    string
	HasFileName bool
	// FileSize is the file's length, known before its first byte is read:
	// see Read.
	FileSize int64
}

// File streams the file's FileSize bytes, and fails with S3's
// MalformedPOSTRequest if the file part ends anywhere else (exactFile).
func (form *Form) File() io.Reader { return &exactFile{r: form.file, left: form.FileSize} }

// Read reads the fields of a multipart/form-data POST up to the
// file part (the last field S3 reads; fields after it are not part of the
// upload) and works out the file's size without reading it: the request's
// Content-Length, minus the bytes before the file's first byte, minus the
// closing delimiter that browsers, curl, Python's requests and Go's
// mime/multipart all send after it ("\r\n--" boundary "--\r\n"). The
// backend PUT needs that length up front. A form in which other bytes
// follow the file fails when the file part ends off that size, before the
// backend PUT is complete (exactFile), so nothing is stored.
func Read(r *http.Request) (*Form, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	boundary := params["boundary"]
	if err != nil || boundary == "" {
		return nil, malformedPost("the Content-Type has no multipart boundary")
	}
	if r.ContentLength < 0 {
		return nil, s3err.New(s3err.MissingContentLength)
	}
	// mime/multipart reads ahead; the raw bytes it was given are kept to
	// find where the file's data starts (fileOffset).
	raw := &recordingBody{r: r.Body, limit: maxPostPreambleBytes}
	reader := multipart.NewReader(raw, boundary)
	form := &Form{Fields: map[string]string{}}
	fieldBytes := 0
	for parts := 1; ; parts++ {
		part, err := reader.NextPart()
		switch {
		case raw.overflow:
			return nil, s3err.New(s3err.MaxPostPreDataLengthExceeded)
		case errors.Is(err, io.EOF):
			return nil, s3err.New(s3err.IncorrectNumberOfFilesInPost)
		case err != nil:
			return nil, formReadError(err)
		}
		name := strings.ToLower(part.FormName())
		if name == "" {
			return nil, malformedPost("a part has no form field name")
		}
		if name == "file" {
			return form.withFile(r.ContentLength, raw, part, parts, boundary)
		}
		value, err := io.ReadAll(io.LimitReader(part, int64(maxPostFieldBytes-fieldBytes+1)))
		switch {
		case raw.overflow:
			return nil, s3err.New(s3err.MaxPostPreDataLengthExceeded)
		case err != nil:
			return nil, formReadError(err)
		}
		if fieldBytes += len(value); fieldBytes > maxPostFieldBytes {
			return nil, s3err.New(s3err.MaxPostPreDataLengthExceeded)
		}
		if _, dup := form.Fields[name]; dup {
			return nil, s3err.Newf(s3err.InvalidArgument, "Bucket POST must not contain the field '%s' more than once.", name).
				With("ArgumentName", name)
		}
		form.Fields[name] = string(value)
	}
}

// withFile completes the form with its file, the parts-th part.
func (form *Form) withFile(contentLength int64, raw *recordingBody, part *multipart.Part, parts int, boundary string) (*Form, error) {
	start, ok := fileOffset(raw.seen, boundary, parts)
	if !ok {
		return nil, malformedPost("the start of the file part was not found")
	}
	raw.stopRecording()
	form.file = part
	form.FileName, form.HasFileName = partFileName(part)
	form.FileSize = contentLength - int64(start) - int64(len("\r\n--"+boundary+"--\r\n"))
	if form.FileSize < 0 {
		return nil, malformedPost("the request is shorter than its form")
	}
	return form, nil
}

// partFileName is the filename parameter of the part's Content-Disposition
// as sent: S3 puts it into the key as it is (mime/multipart's FileName would
// cut it to its last path element), and the key policy judges the result.
func partFileName(part *multipart.Part) (string, bool) {
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	if err != nil {
		return "", false
	}
	name, ok := params["filename"]
	return name, ok
}

// fileOffset finds where the data of the n-th part starts in the raw
// bytes mime/multipart has read, framed as it frames them: the first
// delimiter line, then for each part its header lines, a blank line, the
// data, and the next delimiter (newline, "--", boundary). A part's data
// cannot contain that delimiter, and headers cannot contain a blank line.
func fileOffset(raw []byte, boundary string, n int) (int, bool) {
	delimiter := []byte("--" + boundary)
	pos, nl := 0, []byte("\r\n")
	for { // the preamble: lines up to the first delimiter line
		end := bytes.IndexByte(raw[pos:], '\n')
		if end < 0 {
			return 0, false
		}
		line := raw[pos : pos+end+1]
		pos += end + 1
		if bytes.HasPrefix(line, delimiter) && len(bytes.TrimSpace(line[len(delimiter):])) == 0 {
			if !bytes.HasSuffix(line, nl) {
				nl = []byte("\n")
			}
			break
		}
	}
	for i := 1; ; i++ {
		// pos is the start of part i's headers.
		dataStart := pos + len(nl)
		if !bytes.HasPrefix(raw[pos:], nl) {
			blank := bytes.Index(raw[pos:], append(append([]byte(nil), nl...), nl...))
			if blank < 0 {
				return 0, false
			}
			dataStart = pos + blank + 2*len(nl)
		}
		if i == n {
			return dataStart, true
		}
		next, ok := nextDelimiter(raw, dataStart, append(append([]byte(nil), nl...), delimiter...))
		if !ok {
			return 0, false
		}
		lineEnd := bytes.IndexByte(raw[next+len(nl):], '\n')
		if lineEnd < 0 {
			return 0, false
		}
		pos = next + len(nl) + lineEnd + 1
	}
}

// nextDelimiter finds the delimiter that ends a part's data, from start:
// as mime/multipart reads it, newline, "--", boundary, then "-" (the
// close), white space or a newline; "--boundaryX" is data.
func nextDelimiter(raw []byte, start int, delimiter []byte) (int, bool) {
	for {
		i := bytes.Index(raw[start:], delimiter)
		if i < 0 {
			return 0, false
		}
		at := start + i
		if end := at + len(delimiter); end < len(raw) && strings.IndexByte("- \t\r\n", raw[end]) >= 0 {
			return at, true
		}
		start = at + 1
	}
}

// MissingKey is S3's answer to a form without a key field, in the words it
// has for any missing field (sigv4 answers so for the signature's fields).
func MissingKey() error {
	return s3err.Newf(s3err.InvalidArgument, "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", FieldKey).
		With("ArgumentName", FieldKey).
		With("ArgumentValue", "")
}

// formReadError is the answer to a form that failed while being read: the
// body's own error (RequestTimeout from its deadlines) when it is one of
// s3cond's, else MalformedPOSTRequest.
func formReadError(err error) *s3err.Error {
	var e *s3err.Error
	if errors.As(err, &e) {
		return e
	}
	return malformedPost(err.Error())
}

func malformedPost(detail string) *s3err.Error {
	e := s3err.New(s3err.MalformedPOSTRequest)
	e.Cause = errors.New(detail)
	return e
}

// recordingBody keeps the raw bytes read until stopRecording, up to
// limit bytes. It sits under mime/multipart, which would buffer a part's
// header up to 10 MiB before returning it: past limit, overflow is set and
// every further read fails, so no more than limit bytes (and
// mime/multipart's read-ahead buffer) are ever read before the file.
type recordingBody struct {
	r        io.Reader
	limit    int
	seen     []byte
	overflow bool
	stopped  bool
}

// errPreambleTooLong stops mime/multipart once the fields have used up
// the wire bytes they may take; Read answers overflow instead.
var errPreambleTooLong = errors.New("the form's fields exceed their wire-byte bound")

func (b *recordingBody) Read(p []byte) (int, error) {
	if b.overflow {
		return 0, errPreambleTooLong
	}
	if !b.stopped && len(p) > b.limit-len(b.seen)+1 {
		p = p[:b.limit-len(b.seen)+1] // one byte past the limit tells overflow
	}
	n, err := b.r.Read(p)
	if !b.stopped {
		if len(b.seen)+n > b.limit {
			b.overflow, b.seen = true, nil
			return 0, errPreambleTooLong
		}
		b.seen = append(b.seen, p[:n]...)
	}
	return n, err
}

func (b *recordingBody) stopRecording() { b.stopped, b.seen = true, nil }

// exactFile passes the file part through and fails, with S3's
// MalformedPOSTRequest, if it ends anywhere but at the size Read
// computed: then something other than the closing delimiter followed it.
type exactFile struct {
	r    io.Reader
	left int64
}

func (f *exactFile) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, f.checkEnd()
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.r.Read(p)
	f.left -= int64(n)
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF && f.left > 0:
		return n, notLastField(err)
	case err == io.EOF:
		return n, nil // the next Read checks that the part ends here
	}
	return n, s3err.Wrap(s3err.IncompleteBody, err)
}

// checkEnd reads on past the computed size: the part must end there.
func (f *exactFile) checkEnd() error {
	var probe [1]byte
	for {
		n, err := f.r.Read(probe[:])
		switch {
		case n > 0:
			return notLastField(nil)
		case err == io.EOF:
			return io.EOF
		case err != nil:
			return s3err.Wrap(s3err.IncompleteBody, err)
		}
	}
}

func notLastField(cause error) *s3err.Error {
	e := s3err.Newf(s3err.MalformedPOSTRequest,
		"The body of your POST request is not well-formed multipart/form-data: s3cond needs the file to be the form's last field, followed only by the closing boundary.")
	e.Cause = cause
	return e
}
