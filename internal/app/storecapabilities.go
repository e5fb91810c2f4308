package app

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/proxy"
)

// The start-up checks of what the store does with a write, beside the
// conditional probe (conditional.go): body framing, and the headers of
// docs/spec.md §7 forwarded only where the store honours them.

// bodyFraming decides whether the backend's PutObject bodies travel framed
// (docs/spec.md §4): aws-chunked as configured, never on the embedded store
// (gofakes3 would keep the framing as the object's bytes), and with auto
// where a start-up check finds the store reads framed uploads and keeps
// nothing of an unfinished one. Unframed, an abort relies on s3cond's
// connection reset reaching the store, which a hop closing with a FIN
// defeats: that is logged as a warning, whether chosen or found.
func bodyFraming(ctx context.Context, b config.Backend, creds aws.CredentialsProvider, log zerolog.Logger) bool {
	switch {
	case b.ConditionalBodyFraming == config.BodyFramingAWSChunked:
		return true
	case b.Type == config.BackendEmbedded:
		return false // in process: no hop between s3cond and the store
	case b.ConditionalBodyFraming == config.BodyFramingNone:
		log.Warn().Str("backend", b.Name).Str("conditional_body_framing", b.ConditionalBodyFraming).
			Msg("PutObject bodies are not framed: an abandoned or refused upload is cut short, and a hop that turns s3cond's reset into a FIN can make the store keep it truncated")
		return false
	}
	r := probe.Framing(ctx, probe.Options{
		Endpoint:    b.Endpoint,
		Region:      b.Region,
		PathStyle:   b.Addressing != config.AddressingVirtual,
		Credentials: creds,
		Bucket:      b.ProbeBucket,
		Timeout:     startupProbeTimeout,
		NewHTTPClient: func() *http.Client {
			return &http.Client{Transport: backendTransport(b.Pool), CheckRedirect: noRedirects}
		},
	})
	if r.Verdict != probe.Native {
		log.Warn().Str("backend", b.Name).Str("conditional_body_framing", b.ConditionalBodyFraming).
			Str("verdict", string(r.Verdict)).Str("evidence", r.Detail).
			Msg("PutObject bodies are not framed: the store was not found to refuse an unfinished aws-chunked upload, so an abort relies on s3cond's reset reaching it (a hop that closes with a FIN defeats that)")
		return false
	}
	log.Info().Str("backend", b.Name).Str("evidence", r.Detail).
		Msg("PutObject bodies are framed (aws-chunked): an abandoned or refused upload is refused by the store however the connection closes")
	return true
}

// storeKeeps runs the start-up checks behind docs/spec.md §7's "501 or
// forwarded" rows: object lock and the multipart conditions are forwarded
// only to a store found to honour them, and answered 501 elsewhere, the
// embedded store included, rather than ignored by a store without them.
// Each check works in a scratch bucket it creates and removes.
func storeKeeps(ctx context.Context, b config.Backend, creds aws.CredentialsProvider, log zerolog.Logger) map[string]bool {
	if b.Type == config.BackendEmbedded {
		return nil
	}
	opts := probe.Options{
		Endpoint:    b.Endpoint,
		Region:      b.Region,
		PathStyle:   b.Addressing != config.AddressingVirtual,
		Credentials: creds,
		Timeout:     startupProbeTimeout,
		NewHTTPClient: func() *http.Client {
			return &http.Client{Transport: backendTransport(b.Pool), CheckRedirect: noRedirects}
		},
	}
	multipart := probe.CheckMultipartConditions(ctx, opts)
	found := map[string]probe.Result{
		proxy.KeepsObjectLock:         probe.CheckObjectLock(ctx, opts),
		proxy.KeepsMPUObjectSize:      multipart[probe.MPUObjectSize],
		proxy.KeepsAbortInitiatedTime: multipart[probe.AbortInitiatedTime],
	}
	keeps := make(map[string]bool, len(found))
	for name, r := range found {
		keeps[name] = r.Verdict == probe.Native
		ev := log.Info()
		if !keeps[name] {
			ev = log.Warn()
		}
		ev.Str("backend", b.Name).Str("capability", name).Str("verdict", string(r.Verdict)).Str("evidence", r.Detail).
			Bool("forwarded", keeps[name]).
			Msg("the headers of this capability are forwarded only to a store found to honour it; 501 NotImplemented otherwise")
	}
	return keeps
}
