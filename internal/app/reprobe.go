package app

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// A background re-probe is not on the start-up path: it takes the probe's
// full bound and races for half of it, 15 times a start-up's race, so
// that a store that loses races only now and then shows it: a store
// racing a round in a few milliseconds reaches probe.DefaultRounds (a
// race lost 1 round in 40 missed with probability 0.004%), and one that
// queues its writers (SeaweedFS, a second a writer) races 5 to 30 rounds
// where a start-up races 2 or 3 (race.go). A capability it finds racy is
// held racy from then on (verdicthold.go).
const (
	reprobeTimeout  = probe.DefaultTimeout
	reprobeRaceTime = reprobeTimeout / 2
)

// reprobeSettings are how the background re-probes run: the time each
// race starts rounds for, and (tests) a hook hearing of each re-probe's end.
type reprobeSettings struct {
	raceTime time.Duration
	done     func(downgraded bool)
}

// downgradeMetrics count backends switched to leasing by a re-probe.
type downgradeMetrics struct{ downgrades *prometheus.CounterVec }

func newDowngradeMetrics(reg prometheus.Registerer) *downgradeMetrics {
	m := &downgradeMetrics{downgrades: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "s3cond_backend_downgrades_total",
		Help: "Backends a background re-probe switched to leasing (or to leasing before the first byte) because the store's verdict got worse; they stay so until a restart.",
	}, []string{"backend"})}
	reg.MustRegister(m.downgrades)
	return m
}

// reprober probes one backend again every backend.reprobe_interval and,
// when the verdict got worse than what the backend is served with, throws
// its switch (modeSwitch): from the next request on, conditional writes
// take leases. The new verdict is kept in data_dir either way.
type reprober struct {
	backend config.Backend
	opts    probe.Options
	modes   *modeSwitch
	path    string
	app     *App
	log     zerolog.Logger
	// reprobed, when set (tests), hears of each re-probe's end.
	reprobed func(downgraded bool)
}

// startReprobe starts b's background re-probe, stopped when the app
// closes; nothing for a backend that is not probed or when it is off.
func (a *App) startReprobe(b config.Backend, creds aws.CredentialsProvider, modes *modeSwitch, log zerolog.Logger) {
	if a.downgrades == nil {
		a.downgrades = newDowngradeMetrics(a.Registry)
	}
	// A series from the start, so that the alert rule reads one.
	a.downgrades.downgrades.WithLabelValues(b.Name).Add(0)
	if !b.Probes() || b.ReprobeInterval <= 0 {
		return
	}
	r := &reprober{backend: b, modes: modes, path: verdictPath(a.dataDir, b.Name), app: a,
		log: log.With().Str("backend", b.Name).Str("component", "reprobe").Logger(), reprobed: a.reprobe.done}
	r.opts = probe.Options{
		Endpoint: b.Endpoint, Region: b.Region, PathStyle: b.Addressing != config.AddressingVirtual,
		Credentials: creds, Bucket: b.ProbeBucket, Timeout: reprobeTimeout, RaceTime: a.reprobe.raceTime,
		NewHTTPClient: func() *http.Client {
			return &http.Client{Transport: backendTransport(b.Pool), CheckRedirect: noRedirects}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.loop(ctx)
	}()
	a.closers = append(a.closers, func(context.Context) error {
		cancel()
		<-done
		return nil
	})
}

func (r *reprober) loop(ctx context.Context) {
	tick := time.NewTicker(r.backend.ReprobeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		downgraded := r.once(ctx)
		if r.reprobed != nil {
			r.reprobed(downgraded)
		}
	}
}

// once probes the store, keeps the verdict and switches the backend when
// the verdict got worse; it reports whether it switched.
func (r *reprober) once(ctx context.Context) bool {
	id, err := probe.StoreIdentity(ctx, r.opts)
	if err != nil {
		r.log.Warn().Err(err).Msg("re-probe: the store did not say who it is; trying again at the next interval")
		return false
	}
	rep, err := probe.Run(ctx, r.opts)
	if err != nil || ctx.Err() != nil {
		return false
	}
	rep = holdBackRacy(rep, r.path, id, r.log)
	keepVerdict(r.path, storedVerdict{Backend: r.backend.Name, Store: id, ProbedAt: time.Now().UTC(), Report: rep}, r.log)
	r.app.conditional.record(r.backend.Name, rep)
	worse, why, ok := worseThanServed(r.modes.Mode(), r.backend.WritesInPlace, rep)
	if !ok {
		r.log.Info().Str("server", id.Server).Msg("re-probe: the store's verdict is no worse than what it is served with")
		return false
	}
	if !r.modes.switchTo(worse) {
		return false
	}
	r.app.downgrades.downgrades.WithLabelValues(r.backend.Name).Inc()
	r.app.conditional.switched(r.backend, worse)
	r.log.Error().Str("server", id.Server).Str("version", id.Version).Str("capability", why.capability).
		Str("verdict", string(why.verdict)).Str("evidence", why.detail).Str("mode", worse.Kind.String()).
		Strs("store_checks", worse.Checks.Names()).
		Msg("re-probe: the store's verdict got worse; the backend's conditional writes are leased from now on, until a restart (writes already in flight finish as they began)")
	return true
}

// worsening names the capability whose verdict made a backend worse off.
type worsening struct {
	capability string
	verdict    probe.Verdict
	detail     string
}

// worseThanServed is the mode rep calls for where it asks for something
// the served mode does not do already (ok false otherwise): leases for a
// backend served without leases where a capability one of its rules
// relies on is no longer met (native, or partial with the rule's remedy); for a leased one, fewer store checks where the store stopped
// checking a condition leased writes send it; the lease before the first
// byte where uploads now show early (configuredInPlace: the backend was
// configured so). A capability that could not be measured (error: the
// store down for a moment) switches nothing: the next re-probe measures
// again.
func worseThanServed(served leasedwrite.Mode, configuredInPlace bool, rep probe.Report) (worse leasedwrite.Mode, why worsening, ok bool) {
	worse = served
	if served.Kind == leasedwrite.Native {
		// Each rule served relies on its capabilities (rules.go); one no
		// longer met leases everything, as mixing is unsafe.
		for _, q := range servedRequirements(served.Rules) {
			if r := rep.Capabilities[q.capability]; !q.met(rep.Capabilities) && r.Verdict != probe.Error {
				why = worsening{capability: q.capability, verdict: r.Verdict, detail: r.Detail}
				worse = leasedwrite.Mode{Kind: leasedwrite.HoldBack, Checks: storeChecks(rep.Capabilities), SkipRecordedETags: served.SkipRecordedETags}
				if configuredInPlace {
					worse.Kind = leasedwrite.LeaseFirst
				}
				break
			}
		}
	} else if lost := lostStoreCheck(served.Checks, storeChecks(rep.Capabilities)); lost != "" && measured(rep) {
		// Sent to a store that no longer checks it, a condition is ignored
		// at best and refused (501) at worst.
		why = worsening{capability: lost, verdict: "no longer checked", detail: "a condition leased writes send the store"}
		worse.Checks = storeChecks(rep.Capabilities)
	}
	// Uploads shown before their last byte matter only to leased writes.
	if r := rep.Capabilities[probe.AtomicUploads]; r.Verdict == probe.InPlace && worse.Kind == leasedwrite.HoldBack {
		if why.capability == "" {
			why = worsening{capability: probe.AtomicUploads, verdict: r.Verdict, detail: r.Detail}
		}
		worse.Kind = leasedwrite.LeaseFirst
	}
	return worse, why, why.capability != ""
}

// lostStoreCheck names a condition was sends the store that now does not,
// or "".
func lostStoreCheck(was, now leasedwrite.StoreChecks) string {
	kept := map[string]bool{}
	for _, name := range now.Names() {
		kept[name] = true
	}
	for _, name := range was.Names() {
		if !kept[name] {
			return name
		}
	}
	return ""
}

// record replaces backend's capability series with rep's verdicts.
func (m *conditionalMetrics) record(backend string, rep probe.Report) {
	m.capability.DeletePartialMatch(prometheus.Labels{"backend": backend})
	for _, name := range probe.AllCapabilities {
		m.capability.WithLabelValues(backend, name, string(rep.Capabilities[name].Verdict)).Set(1)
	}
}

// switched moves b's mode series to the mode it is served in now.
func (m *conditionalMetrics) switched(b config.Backend, now leasedwrite.Mode) {
	mode := config.ConditionalLease
	if now.Kind == leasedwrite.Native {
		mode = config.ConditionalNative
	}
	m.mode.DeletePartialMatch(prometheus.Labels{"backend": b.Name})
	m.rule.DeletePartialMatch(prometheus.Labels{"backend": b.Name})
	m.mode.WithLabelValues(b.Name, b.Conditional, mode).Set(1)
}
