// Package tlsreload serves a TLS certificate that can be replaced while the
// server runs: the pair is read again on demand (SIGHUP in s3cond), and a
// pair that fails to load leaves the current one in service.
package tlsreload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/rs/zerolog"
)

// Reloader holds the certificate in service. It is safe for concurrent use.
type Reloader struct {
	certFile, keyFile string
	log               zerolog.Logger
	cert              atomic.Pointer[tls.Certificate]
}

// New loads the pair once; an error here stops start-up, since there is no
// older certificate to fall back on.
func New(certFile, keyFile string, log zerolog.Logger) (*Reloader, error) {
	r := &Reloader{certFile: certFile, keyFile: keyFile, log: log}
	cert, err := r.load()
	if err != nil {
		return nil, err
	}
	r.cert.Store(cert)
	return r, nil
}

func (r *Reloader) load() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	if cert.Leaf == nil && len(cert.Certificate) > 0 {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse TLS certificate %s: %w", r.certFile, err)
		}
	}
	return &cert, nil
}

// Reload reads the pair again. On failure the certificate in service stays
// and the error is returned (and logged).
func (r *Reloader) Reload() error {
	cert, err := r.load()
	if err != nil {
		r.log.Error().Err(err).Msg("TLS certificate reload failed; still serving the previous certificate")
		return err
	}
	r.cert.Store(cert)
	r.log.Info().Str("subject", cert.Leaf.Subject.String()).Time("not_after", cert.Leaf.NotAfter).
		Msg("TLS certificate reloaded")
	return nil
}

// TLSConfig is a server configuration serving the reloadable certificate:
// every handshake takes the certificate in service at that moment.
func (r *Reloader) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return r.cert.Load(), nil
		},
	}
}

// ReloadOn calls Reload for every value received on signals (SIGHUP, as
// registered by the caller with signal.Notify) until ctx ends.
func (r *Reloader) ReloadOn(ctx context.Context, signals <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-signals:
			_ = r.Reload() // logged; the old certificate stays in service
		}
	}
}
