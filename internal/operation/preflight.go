package operation

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/s3cond/s3cond/s3err"
)

// A CORS preflight is OPTIONS with Origin and Access-Control-Request-Method
// (proxy/preflight.go forwards it): Classify names one PreflightRequest only
// when those headers are what S3 reads in one.

// corsMethods are the methods a CORS rule can allow (S3's AllowedMethod),
// spelled as S3 requires them: in capitals.
var corsMethods = map[string]bool{
	http.MethodGet: true, http.MethodPut: true, http.MethodPost: true, http.MethodDelete: true, http.MethodHead: true,
}

// CheckPreflightHeaders checks the headers of an OPTIONS request, with
// S3's answers: 400 BadRequest when Origin or Access-Control-Request-Method
// is missing or the method is none CORS knows, or a requested header name
// is not an HTTP token.
func CheckPreflightHeaders(h http.Header) error {
	origin := h.Values("Origin")
	switch {
	case len(origin) == 0 || origin[0] == "":
		return s3err.Newf(s3err.BadRequest, "Insufficient information. Origin request header needed.")
	case len(origin) > 1:
		return s3err.Newf(s3err.BadRequest, "A CORS preflight request carries one Origin header.")
	}
	method := h.Values("Access-Control-Request-Method")
	switch {
	case len(method) == 0 || method[0] == "":
		return s3err.Newf(s3err.BadRequest, "Invalid Access-Control-Request-Method: null")
	case len(method) > 1 || !corsMethods[method[0]]:
		return s3err.Newf(s3err.BadRequest, "Invalid Access-Control-Request-Method: %s", strings.Join(method, ","))
	}
	return checkRequestedHeaders(h.Values("Access-Control-Request-Headers"))
}

// checkRequestedHeaders accepts a comma-separated list of header names
// (over one or more header lines), blanks around the commas allowed.
func checkRequestedHeaders(values []string) error {
	list := strings.Join(values, ",")
	if textproto.TrimString(list) == "" {
		return nil
	}
	for _, name := range strings.Split(list, ",") {
		if !httpguts.ValidHeaderFieldName(textproto.TrimString(name)) {
			return s3err.Newf(s3err.BadRequest, `Access-Control-Request-Headers "%s" contains invalid character.`, name)
		}
	}
	return nil
}
