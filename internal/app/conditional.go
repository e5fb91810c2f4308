package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// conditionalMetrics expose what the start-up probe found and the mode
// chosen, per backend.
type conditionalMetrics struct {
	capability *prometheus.GaugeVec
	mode       *prometheus.GaugeVec
	rule       *prometheus.GaugeVec
}

func newConditionalMetrics(reg prometheus.Registerer) *conditionalMetrics {
	m := &conditionalMetrics{
		capability: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "s3cond_backend_capability",
			Help: "1 for the verdict the start-up probe gave each conditional capability of a backend (s3cond probe).",
		}, []string{"backend", "capability", "verdict"}),
		mode: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "s3cond_backend_conditional_mode",
			Help: "1 for the mode s3cond serves conditional writes of a backend with (lease or native), and the configured setting.",
		}, []string{"backend", "configured", "mode"}),
	}
	m.rule = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "s3cond_backend_conditional_rule",
		Help: "1 for the rule each conditional operation of a backend served without leases is made atomic by (native, reduced to If-Match, If-Match unquoted, entries as DeleteObject); none while the backend leases.",
	}, []string{"backend", "operation", "rule"})
	reg.MustRegister(m.capability, m.mode, m.rule)
	return m
}

// conditionalMode decides how the backend's conditional writes are served
// (leasedwrite.Mode): natively (lease and unverified native as configured;
// auto and native after a probe of the store; a native store the probe
// finds wanting is an error naming the capability), or under leases.
//
// A leased mode is lease-first where the store shows an upload before its
// last byte (backend.writes_in_place, or the probe's in-place verdict), and
// hold-back otherwise; after a probe its checks are the conditions the
// store was found to evaluate right one request at a time, which leased
// writes still send (leasedwrite.StoreChecks).
//
// strict says strict mode (lease.serialize: all-writes) may apply to a
// bucket the backend serves: auto then leases whatever the probe found.
func (a *App) conditionalMode(ctx context.Context, b config.Backend, key string, strict bool, creds aws.CredentialsProvider, log zerolog.Logger) (leasedwrite.Mode, error) {
	if a.conditional == nil {
		a.conditional = newConditionalMetrics(a.Registry)
	}
	native, plan, err := a.probeConditional(ctx, b, key, strict, creds, log)
	if err != nil {
		return leasedwrite.Mode{}, err
	}
	mode := leasedwrite.Mode{Kind: leasedwrite.HoldBack, Checks: plan.checks, Rules: plan.rules, SkipRecordedETags: b.SkipRecordedETags}
	inPlace := plan.inPlace
	label := config.ConditionalLease
	switch {
	case native:
		mode.Kind, label = leasedwrite.Native, config.ConditionalNative
		// copyemulation.go: the plan's rule where the store was probed;
		// as configured where it was not (native unverified).
		mode.EmulateCopy = b.CopyEmulation && (!b.Probes() || mode.Rule(operation.CopyObject) == leasedwrite.RuleEmulated)
	case b.WritesInPlace || inPlace:
		mode.Kind = leasedwrite.LeaseFirst
	}
	if strict && mode.Kind == leasedwrite.Native {
		log.Warn().Str("backend", b.Name).
			Msg("strict mode applies to a bucket of a backend served natively (conditional: native): its unconditional writes take no lease, so only the store orders them against conditional ones")
	}
	a.conditional.mode.WithLabelValues(b.Name, b.Conditional, label).Set(1)
	if mode.Kind == leasedwrite.Native {
		for _, o := range leaseFreeOperations {
			a.conditional.rule.WithLabelValues(b.Name, o.op.String(), mode.Rule(o.op).String()).Set(1)
		}
	}
	return mode, nil
}

// probedPlan is what the probe says of a backend beyond native or not:
// the lease-free rules of a native one; for a leased one, the conditions
// the store checks right itself and whether it writes in place.
type probedPlan struct {
	rules   leasedwrite.Rules
	checks  leasedwrite.StoreChecks
	inPlace bool
}

// probeConditional runs the start-up probe where the configuration asks
// for one, and says whether the store can be served without leases (every
// operation native, or, under auto, made atomic by the store's own checks:
// rules.go) and the rest of the plan.
func (a *App) probeConditional(ctx context.Context, b config.Backend, key string, strict bool, creds aws.CredentialsProvider, log zerolog.Logger) (native bool, plan probedPlan, err error) {
	m := a.conditional
	if !b.Probes() {
		return b.Conditional == config.ConditionalNative, plan, nil
	}
	// The probe shares backend.startup_checks_timeout with the other
	// start-up checks, and runs beside them (storecapabilities.go).
	rep, err := a.probeStore(ctx, b, probe.Options{
		Endpoint:    b.Endpoint,
		Region:      b.Region,
		PathStyle:   b.Addressing != config.AddressingVirtual,
		Credentials: creds,
		Bucket:      b.ProbeBucket,
		Timeout:     b.StartupChecksTimeout * 2 / 3,
		NewHTTPClient: func() *http.Client {
			return &http.Client{Transport: backendTransport(b.Pool), CheckRedirect: noRedirects}
		},
	}, log)
	if err != nil {
		return false, plan, fmt.Errorf("%s: probe the store: %w", key, err)
	}
	for _, name := range probe.AllCapabilities {
		r := rep.Capabilities[name]
		m.capability.WithLabelValues(b.Name, name, string(r.Verdict)).Set(1)
		log.Info().Str("backend", b.Name).Str("capability", name).Str("verdict", string(r.Verdict)).Str("remedy", r.Remedy).Str("evidence", r.Detail).Msg("probed the store")
	}
	wanting := firstWantingUnlessEmulated(b, rep.Capabilities) // copyemulation.go
	if b.Conditional == config.ConditionalNative && wanting != "" {
		r := rep.Capabilities[wanting]
		return false, plan, fmt.Errorf("%s.conditional: native, but the store's %s is %s (%s); use auto or lease, or set %s.native_unverified: true (dangerous: writes can be lost)",
			key, wanting, r.Verdict, r.Detail, key)
	}
	// auto: lease-free where every operation has a rule the store's own
	// checks make atomic (all native included), leased otherwise.
	rules, unmet, native := leaseFreeRules(rep.Capabilities, backendPlanOptions(b))
	if native && strict {
		// Strict mode orders unconditional writes against conditional
		// ones; without leases only the store could, and the probe races
		// no unconditional write (strict.go).
		native, unmet = false, strictModeWants
	}
	ev := log.Info().Str("backend", b.Name).Str("configured", b.Conditional).Bool("native", native)
	if wanting != "" {
		ev = ev.Str("not_native", wanting)
	}
	if native {
		plan.rules = rules
		ev = ev.Strs("rules", rules.Names())
	} else {
		ev = ev.Str("not_atomic", unmet)
	}
	ev.Msg("conditional writes: " + map[bool]string{true: "native", false: "lease"}[native])
	if !native {
		plan.checks = storeChecks(rep.Capabilities)
		log.Info().Str("backend", b.Name).Strs("store_checks", plan.checks.Names()).
			Msg("leased writes still send the store the conditions it checks right itself")
		plan.inPlace = rep.Capabilities[probe.AtomicUploads].Verdict == probe.InPlace
		if plan.inPlace && !b.WritesInPlace {
			log.Warn().Str("backend", b.Name).
				Msg("the store shows an upload before its last byte: leased writes take their lease before their first byte, as with backend.writes_in_place")
		}
	}
	return native, plan, nil
}

// storeChecks are the write conditions whose probe verdict shows the store
// evaluates them right one request at a time (native, or racy: right
// sequentially, which is all a late write meets).
func storeChecks(caps map[string]probe.Result) leasedwrite.StoreChecks {
	right := func(name string) bool {
		v := caps[name].Verdict
		return v == probe.Native || v == probe.Racy
	}
	checks := leasedwrite.StoreChecks{IfNoneMatch: map[operation.Operation]bool{}, IfMatch: map[operation.Operation]bool{}}
	for op, names := range map[operation.Operation][2]string{
		operation.PutObject:               {probe.PutIfNoneMatch, probe.PutIfMatch},
		operation.CopyObject:              {probe.CopyIfNoneMatch, probe.CopyIfMatch},
		operation.CompleteMultipartUpload: {probe.CompleteIfNoneMatch, probe.CompleteIfMatch},
	} {
		checks.IfNoneMatch[op] = right(names[0])
		checks.IfMatch[op] = right(names[1])
	}
	return checks
}
