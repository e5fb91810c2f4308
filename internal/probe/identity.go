package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Identity is what a store says it is: the endpoint asked, its Server
// header and the version in it, where the store names one
// ("SeaweedFS/4.53"). A verdict on a store holds while its identity does.
type Identity struct {
	Endpoint string `json:"endpoint"`
	Bucket   string `json:"probe_bucket"`
	Server   string `json:"server"`
	Version  string `json:"version,omitempty"`
}

// maxServerHeader bounds the Server header kept: a store's own name, not
// whatever a hostile one sends.
const maxServerHeader = 200

// StoreIdentity asks the store for its identity with one HEAD of the probe
// bucket. Any answer will do (a 403 or a 404 still names the server); no
// answer at all is an error.
func StoreIdentity(ctx context.Context, opts Options) (Identity, error) {
	opts = opts.withDefaults()
	s := newStore(opts)
	defer s.close()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	out, err := s.c().HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	var header http.Header
	if err == nil {
		if raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response); ok {
			header = raw.Header
		}
	} else {
		// A request that got no answer is a ResponseError too, of status 0.
		var answered *awshttp.ResponseError
		if !errors.As(err, &answered) || answered.Response == nil || answered.HTTPStatusCode() == 0 {
			return Identity{}, fmt.Errorf("HEAD bucket %s: %w", opts.Bucket, err)
		}
		header = answered.Response.Header
	}
	server := header.Get("Server")
	if len(server) > maxServerHeader {
		server = server[:maxServerHeader]
	}
	return Identity{Endpoint: opts.Endpoint, Bucket: opts.Bucket, Server: server, Version: serverVersion(server)}, nil
}

// serverVersion is the version of the first product in a Server header
// (RFC 9110: product/version), or "".
func serverVersion(server string) string {
	product, _, _ := strings.Cut(server, " ")
	_, version, _ := strings.Cut(product, "/")
	return version
}
