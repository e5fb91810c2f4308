package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// LeaseStoreEtcd keeps the leases of a fleet in an etcd v3 cluster.
const LeaseStoreEtcd = "etcd"

// Default settings of lease.etcd.
const (
	DefaultEtcdPrefix         = "s3cond/leases/"
	DefaultEtcdDialTimeout    = 5 * time.Second
	DefaultEtcdRequestTimeout = 3 * time.Second
)

// Etcd is the shared lease store on an etcd v3 cluster.
type Etcd struct {
	// Endpoints are the members' client URLs, all http:// or all https://.
	Endpoints []string `yaml:"endpoints,omitempty,flow"`
	// Prefix starts the key of every lease row.
	Prefix   string `yaml:"prefix"`
	Username string `yaml:"username"`
	// Password authenticates Username; after Load it holds the value of
	// PasswordEnv when that is set.
	Password    string  `yaml:"password" secret:"true"`
	PasswordEnv string  `yaml:"password_env"`
	TLS         EtcdTLS `yaml:"tls"`
	// DialTimeout bounds each connection attempt to a member.
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// RequestTimeout bounds each lease read or write: without quorum a
	// conditional write answers 503 after at most about this long.
	RequestTimeout time.Duration `yaml:"request_timeout"`
}

// EtcdTLS are the files for talking to etcd over TLS.
type EtcdTLS struct {
	// CAFile verifies the members' certificates; empty: the system's roots.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are a client certificate, both or neither.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Enabled reports whether any TLS file is set.
func (t EtcdTLS) Enabled() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

func defaultEtcd() Etcd {
	return Etcd{
		Prefix:         DefaultEtcdPrefix,
		DialTimeout:    DefaultEtcdDialTimeout,
		RequestTimeout: DefaultEtcdRequestTimeout,
	}
}

func validateEtcd(e Etcd) error {
	if len(e.Endpoints) == 0 {
		return keyError("lease.etcd.endpoints", "must list the members' client URLs (e.g. [http://10.0.0.1:2379]) when lease.store is etcd")
	}
	scheme := ""
	for i, endpoint := range e.Endpoints {
		if err := validateEtcdEndpoint(endpoint); err != nil {
			return keyError("lease.etcd.endpoints", "entry %d: %v", i, err)
		}
		u, _ := url.Parse(endpoint)
		if scheme != "" && u.Scheme != scheme {
			// The etcd client picks TLS or not once, from the first URL.
			return keyError("lease.etcd.endpoints", "mixes http:// and https:// URLs; use one scheme for every member")
		}
		scheme = u.Scheme
	}
	if e.TLS.Enabled() && scheme != "https" {
		return keyError("lease.etcd.tls", "TLS files are set but lease.etcd.endpoints are http:// URLs; use https://")
	}
	switch {
	case e.TLS.CertFile != "" && e.TLS.KeyFile == "":
		return keyError("lease.etcd.tls.key_file", "must be set when lease.etcd.tls.cert_file is")
	case e.TLS.KeyFile != "" && e.TLS.CertFile == "":
		return keyError("lease.etcd.tls.cert_file", "must be set when lease.etcd.tls.key_file is")
	case strings.TrimSpace(e.Prefix) == "":
		return keyError("lease.etcd.prefix", "must be set (default %s): the lease rows need a key range of their own", DefaultEtcdPrefix)
	case e.Username != "" && e.Password == "":
		return keyError("lease.etcd.password", "must be set (or name an environment variable in password_env) when lease.etcd.username is")
	case e.Password != "" && e.Username == "":
		return keyError("lease.etcd.username", "must be set when lease.etcd.password is")
	case e.DialTimeout <= 0:
		return keyError("lease.etcd.dial_timeout", "must be > 0")
	case e.RequestTimeout <= 0:
		return keyError("lease.etcd.request_timeout", "must be > 0")
	}
	return nil
}

// validateEtcdEndpoint accepts http(s)://host:port without path or
// credentials (the username and password have keys of their own).
func validateEtcdEndpoint(raw string) error {
	if err := validateURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.Port() == "" {
		return fmt.Errorf("%q has no port (etcd's client port is usually 2379)", raw)
	}
	return nil
}

// resolveEtcdPassword reads lease.etcd.password_env.
func resolveEtcdPassword(e *Etcd, vars map[string]string) error {
	if e.PasswordEnv == "" {
		return nil
	}
	value, err := lookupEnv(vars, "lease.etcd.password_env", e.PasswordEnv)
	if err != nil {
		return err
	}
	e.Password = value
	return nil
}
