package testservers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	caKey, caCert, err := newCertificate("s3cond test CA", nil, nil, func(tmpl *x509.Certificate) {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	})
	if err != nil {
		return nil, err
	}
	serverKey, serverCert, err := newCertificate("etcd", caKey, caCert, func(tmpl *x509.Certificate) {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	if err != nil {
		return nil, err
	}
	clientKey, clientCert, err := newCertificate("s3cond", caKey, caCert, func(tmpl *x509.Certificate) {
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
	for path, block := range map[string]*pem.Block{
		c.CA:         {Type: "CERTIFICATE", Bytes: caCert.Raw},
		c.ServerCert: {Type: "CERTIFICATE", Bytes: serverCert.Raw},
		c.ClientCert: {Type: "CERTIFICATE", Bytes: clientCert.Raw},
		c.ServerKey:  keyBlock(serverKey),
		c.ClientKey:  keyBlock(clientKey),
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
	}
	pair, err := tls.LoadX509KeyPair(c.ClientCert, c.ClientKey)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	c.clientTLS = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return c, nil
}

// newCertificate makes a key and a certificate for name, signed by the
// parent pair (self-signed when parent is nil), shaped by adjust.
func newCertificate(name string, parentKey *ecdsa.PrivateKey, parent *x509.Certificate, adjust func(*x509.Certificate)) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	adjust(tmpl)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parentKey, parent
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func keyBlock(key *ecdsa.PrivateKey) *pem.Block {
	der, _ := x509.MarshalECPrivateKey(key) // cannot fail for a P-256 key
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}
