package proxy

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/s3xml"
)

// The property of the value allow-list, for the setting headers
// (settingheaders.go) and CompleteMultipartUpload's part list: a hostile
// value is refused or reaches the store in its checked form.

// The Complete body's values, probed as parameters of their own.
const (
	completeETagParam       = "body:Part/ETag"
	completePartNumberParam = "body:Part/PartNumber"
)

// completeProbeBody is a part list with value in the probed element.
func completeProbeBody(param, value string) []byte {
	var escaped bytes.Buffer
	_ = xml.EscapeText(&escaped, []byte(value))
	number, etag := "1", `"0cc175b9c0f1b6a831c399e269772661"`
	if param == completeETagParam {
		etag = escaped.String()
	} else {
		number = escaped.String()
	}
	return []byte("<CompleteMultipartUpload><Part><PartNumber>" + number + "</PartNumber><ETag>" + etag +
		"</ETag></Part></CompleteMultipartUpload>")
}

// checkSentHeaders holds every header of the table the store received to
// what a store can read one way only: one line, UTF-8 without control
// bytes, and a value its grammar sends on unchanged (so it is the checked
// form, not the client's).
func checkSentHeaders(t *testing.T, r *http.Request, rule probeRule, param, value string) {
	t.Helper()
	where := rule.key.Method + " " + rule.path + " " + param + "=" + strconv.Quote(value)
	for _, g := range settingHeaderGrammars {
		values := r.Header.Values(g.key)
		if len(values) == 0 {
			continue
		}
		if len(values) != 1 || hasControlByte(strings.ReplaceAll(values[0], "\t", " ")) || !utf8.ValidString(values[0]) {
			t.Errorf("%s: the store got %s %q", where, g.key, values)
			continue
		}
		if again, err := g.parse(values[0]); err != nil || again != values[0] {
			t.Errorf("%s: the store got %s %q, not in its checked form", where, g.key, values[0])
		}
	}
	for name, values := range r.Header {
		if strings.HasPrefix(name, "X-Amz-Meta-") && (len(values) != 1 || hasControlByte(strings.ReplaceAll(values[0], "\t", " "))) {
			t.Errorf("%s: the store got %s %q", where, name, values)
		}
	}
}

// checkSentCompleteBody: the store reads a part list that parses, is
// written as s3cond writes one, and names no path.
func checkSentCompleteBody(t *testing.T, body []byte, rule probeRule, param, value string) {
	t.Helper()
	where := rule.key.Method + " " + rule.path + " " + param + "=" + strconv.Quote(value)
	req, err := s3xml.ParseCompleteRequest(bytes.NewReader(body), 0)
	if err != nil {
		t.Errorf("%s: the store got a part list that does not parse: %v\n%s", where, err, body)
		return
	}
	if !bytes.Equal(req.Marshal(), body) {
		t.Errorf("%s: the store got a part list s3cond did not write:\n%s", where, body)
	}
	for _, p := range req.Parts {
		if strings.ContainsAny(p.ETag, "/\\%<>&") || p.PartNumber < 1 || p.PartNumber > 10000 {
			t.Errorf("%s: the store got the part %+v", where, p)
		}
	}
}
