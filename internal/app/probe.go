package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/s3cond/s3cond/internal/awscreds"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
)

// ProbeOptions are the probe's options for the backend of cfg named name:
// its endpoint, region, addressing and credentials, and connection pools
// built like the proxy's. The embedded store is not probed: it is known
// (it ignores conditions on CopyObject and CompleteMultipartUpload).
func ProbeOptions(ctx context.Context, cfg *config.Config, name string) (probe.Options, error) {
	var b *config.Backend
	for _, candidate := range append([]config.Backend{cfg.Backend}, cfg.Backends...) {
		if candidate.Name == name {
			b = &candidate
			break
		}
	}
	if b == nil {
		return probe.Options{}, fmt.Errorf("no backend named %q in the config", name)
	}
	if b.Type == config.BackendEmbedded {
		return probe.Options{}, fmt.Errorf("backend %q is the embedded store, which needs lease; probe a real store", name)
	}
	creds, err := awscreds.Provider(ctx, b.Credentials, b.Region)
	if err != nil {
		return probe.Options{}, fmt.Errorf("backend %q credentials: %w", name, err)
	}
	return probe.Options{
		Endpoint:    b.Endpoint,
		Region:      b.Region,
		PathStyle:   b.Addressing != config.AddressingVirtual,
		Credentials: creds,
		Bucket:      b.ProbeBucket,
		NewHTTPClient: func() *http.Client {
			return &http.Client{Transport: backendTransport(b.Pool), CheckRedirect: noRedirects}
		},
	}, nil
}
