package app

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/proxy"
)

// The start-up checks of what the store does with a write, beside the
// conditional probe (conditional.go): body framing, and the headers of
// docs/spec.md §7 forwarded only where the store honours them.

// storeCapabilities runs the framing check and the §7 checks concurrently
// within budget: two thirds for the checks, the rest for their cleanup
// (probe.Options.Timeout and the checks' cleanup bound). The budget is
// backend.startup_checks_timeout, shared with the conditional probe beside
// them: they run before any listener opens, and an admin port that stays
// closed longer gets the pod killed by a liveness probe. A check that runs
// out counts as failed: framing off, headers 501.
func storeCapabilities(ctx context.Context, b config.Backend, creds aws.CredentialsProvider, log zerolog.Logger, budget time.Duration) (framed bool, keeps map[string]bool) {
	checkTime := budget * 2 / 3
	ctx, cancel := context.WithTimeout(ctx, checkTime)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); framed = bodyFraming(ctx, b, creds, log, checkTime) }()
	go func() { defer wg.Done(); keeps = storeKeeps(ctx, b, creds, log, checkTime) }()
	wg.Wait()
	return framed, keeps
}

// checkOptions are the probe options of one start-up store check.
func checkOptions(b config.Backend, creds aws.CredentialsProvider, timeout time.Duration) probe.Options {
	return probe.Options{
		Endpoint:    b.Endpoint,
		Region:      b.Region,
		PathStyle:   b.Addressing != config.AddressingVirtual,
		Credentials: creds,
		Bucket:      b.ProbeBucket,
		Timeout:     timeout,
		NewHTTPClient: func() *http.Client {
			return &http.Client{Transport: backendTransport(b.Pool), CheckRedirect: noRedirects}
		},
	}
}

// ranOut marks a check's log event when the start-up budget ended it.
func ranOut(ctx context.Context, ev *zerolog.Event) *zerolog.Event {
	if ctx.Err() != nil {
		return ev.Bool("ran_out_of_startup_budget", true)
	}
	return ev
}

// bodyFraming decides whether the backend's PutObject bodies travel framed
// (docs/spec.md §4): aws-chunked as configured, never on the embedded store
// (gofakes3 would keep the framing as the object's bytes), and with auto
// where a start-up check finds the store reads framed uploads and keeps
// nothing of an unfinished one. Unframed, an abort relies on s3cond's
// connection reset reaching the store, which a hop closing with a FIN
// defeats: that is logged as a warning, whether chosen or found.
func bodyFraming(ctx context.Context, b config.Backend, creds aws.CredentialsProvider, log zerolog.Logger, timeout time.Duration) bool {
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
	r := probe.Framing(ctx, checkOptions(b, creds, timeout))
	if r.Verdict != probe.Native {
		ranOut(ctx, log.Warn()).Str("backend", b.Name).Str("conditional_body_framing", b.ConditionalBodyFraming).
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
// The object-lock check works in a scratch bucket it creates and removes
// (object lock is chosen at creation); the multipart one in probe_bucket,
// or without one in a scratch bucket too. They run concurrently.
func storeKeeps(ctx context.Context, b config.Backend, creds aws.CredentialsProvider, log zerolog.Logger, timeout time.Duration) map[string]bool {
	if b.Type == config.BackendEmbedded {
		return nil
	}
	if b.SkipHeaderChecks {
		log.Info().Str("backend", b.Name).Bool("skip_header_checks", true).
			Msg("object-lock and multipart-condition headers are answered 501 NotImplemented: their start-up checks are skipped")
		return nil
	}
	opts := checkOptions(b, creds, timeout)
	var multipart map[string]probe.Result
	var objectLock probe.Result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); multipart = probe.CheckMultipartConditions(ctx, opts) }()
	go func() { defer wg.Done(); objectLock = probe.CheckObjectLock(ctx, opts) }()
	wg.Wait()
	found := map[string]probe.Result{
		proxy.KeepsObjectLock:         objectLock,
		proxy.KeepsMPUObjectSize:      multipart[probe.MPUObjectSize],
		proxy.KeepsAbortInitiatedTime: multipart[probe.AbortInitiatedTime],
	}
	keeps := make(map[string]bool, len(found))
	for name, r := range found {
		keeps[name] = r.Verdict == probe.Native
		ev := log.Info()
		if !keeps[name] {
			ev = ranOut(ctx, log.Warn())
		}
		ev.Str("backend", b.Name).Str("capability", name).Str("verdict", string(r.Verdict)).Str("evidence", r.Detail).
			Bool("forwarded", keeps[name]).
			Msg("the headers of this capability are forwarded only to a store found to honour it; 501 NotImplemented otherwise")
	}
	return keeps
}
