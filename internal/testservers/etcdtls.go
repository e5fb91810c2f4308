package testservers

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/s3cond/s3cond/internal/testkit"
)

// EtcdCerts are PEM files for an etcd cluster that serves its clients over
// TLS and requires a client certificate: a test CA, a server certificate for
// 127.0.0.1, and a client certificate, all signed by the CA.
type EtcdCerts struct {
	CA                    string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	clientTLS             *tls.Config // for the harness's own clients
}

// StartEtcdClusterTLS starts a one-member cluster whose client URL is
// https:// and that accepts only clients with a certificate of its CA.
func StartEtcdClusterTLS(t testing.TB) (*EtcdCluster, *EtcdCerts) {
	t.Helper()
	certs, err := writeEtcdCerts(t.TempDir())
	if err != nil {
		t.Fatalf("etcd test certificates: %v", err)
	}
	return startEtcdCluster(t, 1, certs), certs
}

func writeEtcdCerts(dir string) (*EtcdCerts, error) {
	ca, err := testkit.NewCertificate("s3cond test CA", nil, func(tmpl *x509.Certificate) {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	})
	if err != nil {
		return nil, err
	}
	server, err := testkit.NewCertificate("etcd", ca, testkit.ServerAuth("127.0.0.1"))
	if err != nil {
		return nil, err
	}
	client, err := testkit.NewCertificate("s3cond", ca, func(tmpl *x509.Certificate) {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	if err != nil {
		return nil, err
	}
	c := &EtcdCerts{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	if err := os.WriteFile(c.CA, ca.CertPEM(), 0o600); err != nil {
		return nil, err
	}
	if err := server.WriteFiles(c.ServerCert, c.ServerKey); err != nil {
		return nil, err
	}
	if err := client.WriteFiles(c.ClientCert, c.ClientKey); err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(c.ClientCert, c.ClientKey)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	c.clientTLS = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return c, nil
}
