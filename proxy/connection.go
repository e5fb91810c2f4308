package proxy

import (
	"net/http"
	"net/textproto"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// connectionOptions are what a client's Connection header may name (RFC
// 9110 §7.6.1): the connection options close and keep-alive, and the
// headers that belong to one connection and are never forwarded anyway
// (HTTP2-Settings comes with an h2c upgrade). A proxy must drop every
// header the Connection header names; naming any other header would let an
// unsigned Connection header remove a signed one after verification (user
// metadata, Content-Disposition, x-amz-tagging, a copy-source condition),
// so such a request is refused, and what s3cond verifies, classifies and
// forwards stays the same request.
var connectionOptions = newHeaderSet("Close", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate", "Http2-Settings")

// checkConnectionHeader refuses a request whose Connection header names
// anything but a connection option or a hop-by-hop header.
func checkConnectionHeader(h http.Header) error {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" || connectionOptions[textproto.CanonicalMIMEHeaderKey(name)] {
				continue
			}
			return s3err.Newf(s3err.InvalidArgument,
				"The Connection header may name only close, keep-alive and hop-by-hop headers; it names %q, which s3cond will not drop from the request.", name).
				With("ArgumentName", "Connection").With("ArgumentValue", v)
		}
	}
	return nil
}
