package embedded

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/johannesboyne/gofakes3"

	"github.com/s3cond/s3cond/s3err"
)

// writeError answers err as S3 error XML, for every handler s3cond puts in
// front of gofakes3: a gofakes3 error with the status gofakes3 gives its
// code, anything else (s3cond's own errors, from sigv4 for instance) as
// s3cond writes them.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var coded interface{ ErrorCode() gofakes3.ErrorCode }
	if !errors.As(err, &coded) {
		s3err.Write(w, r, err, "embedded")
		return
	}
	code := coded.ErrorCode()
	body, _ := xml.Marshal(struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string   `xml:"Code"`
		Message  string   `xml:"Message"`
		Resource string   `xml:"Resource"`
	}{Code: string(code), Message: err.Error(), Resource: r.URL.Path})
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(code.Status())
	_, _ = fmt.Fprintf(w, "%s%s", xml.Header, body)
}
