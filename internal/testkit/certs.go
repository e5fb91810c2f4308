package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// Certificate is a test key and its certificate.
type Certificate struct {
	Key  *ecdsa.PrivateKey
	Cert *x509.Certificate
}

// NewCertificate makes a P-256 key and a certificate for name valid from an
// hour ago for a day, signed by issuer (self-signed when issuer is nil) and
// shaped by adjust (SANs, key usages, IsCA), which may be nil.
func NewCertificate(name string, issuer *Certificate, adjust func(*x509.Certificate)) (*Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("key for %s: %w", name, err)
	}
	// A fresh serial each time: a client that saw one certificate must
	// not take a renewed one for it (tlsreload's tests swap pairs).
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, fmt.Errorf("serial for %s: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if adjust != nil {
		adjust(tmpl)
	}
	parent, signer := tmpl, key
	if issuer != nil {
		parent, signer = issuer.Cert, issuer.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate %s: %w", name, err)
	}
	return &Certificate{Key: key, Cert: cert}, nil
}

// CertPEM is the certificate as a PEM block.
func (c *Certificate) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})
}

// KeyPEM is the key as a PEM block.
func (c *Certificate) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(c.Key)
	if err != nil {
		return nil, fmt.Errorf("marshal the key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// WriteFiles writes the certificate and the key as PEM files.
func (c *Certificate) WriteFiles(certFile, keyFile string) error {
	if err := os.WriteFile(certFile, c.CertPEM(), 0o600); err != nil {
		return fmt.Errorf("write certificate: %w", err)
	}
	key, err := c.KeyPEM()
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	return nil
}

// ServerAuth makes a certificate serve TLS for host: an IP address
// (127.0.0.1) or a DNS name.
func ServerAuth(host string) func(*x509.Certificate) {
	return func(tmpl *x509.Certificate) {
		if ip := net.ParseIP(host); ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
		} else {
			tmpl.DNSNames = []string{host}
		}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
}

// WriteSelfSigned writes a fresh self-signed server certificate for host
// and its key to certFile and keyFile; the test fails if it cannot.
func WriteSelfSigned(t testing.TB, certFile, keyFile, host string) *Certificate {
	t.Helper()
	c, err := NewCertificate(host, nil, ServerAuth(host))
	if err == nil {
		err = c.WriteFiles(certFile, keyFile)
	}
	if err != nil {
		t.Fatalf("self-signed certificate for %s: %v", host, err)
	}
	return c
}
