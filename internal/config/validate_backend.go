package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The checks of the backend section: its endpoints, pools and credentials.

func (c *Config) validateBackend() error {
	if err := validateOneBackend(c.Backend, "backend"); err != nil {
		return err
	}
	servedBy := map[string]string{}
	for client := range c.Backend.Buckets {
		servedBy[client] = "backend"
	}
	names := map[string]string{c.Backend.Name: "backend"}
	for i, b := range c.Backends {
		prefix := fmt.Sprintf("backends[%d]", i)
		switch {
		case b.Name == "":
			return keyError(prefix+".name", "must be set: it names the backend in logs and errors")
		case names[b.Name] != "":
			return keyError(prefix+".name", "%q is already used by %s", b.Name, names[b.Name])
		case b.Type != BackendS3:
			return keyError(prefix+".type", "must be %s: only backend may be the embedded store", BackendS3)
		case len(b.Buckets) == 0:
			return keyError(prefix+".buckets", "must list the client buckets this backend serves")
		}
		names[b.Name] = prefix
		if err := validateOneBackend(b, prefix); err != nil {
			return err
		}
		for _, client := range sortedKeys(b.Buckets) {
			if other, ok := servedBy[client]; ok {
				return keyError(prefix+".buckets."+client, "bucket %q is already served by %s", client, other)
			}
			servedBy[client] = prefix
		}
	}
	return nil
}

func validateOneBackend(b Backend, prefix string) error {
	switch b.Type {
	case BackendEmbedded:
		// A store named but not used would put production data on local
		// disk without a word: refuse it.
		if b.Endpoint != "" {
			return keyError(prefix+".endpoint", "is set, but %s.type is embedded, which uses no endpoint; set %s.type: s3 to use it, or remove the endpoint", prefix, prefix)
		}
		if b.Credentials.isSet() {
			return keyError(prefix+".credentials", "are set, but %s.type is embedded, which uses none; set %s.type: s3 and %s.endpoint, or remove them", prefix, prefix, prefix)
		}
		if b.Addressing == AddressingVirtual {
			return keyError(prefix+".addressing", "the embedded backend supports only path")
		}
		if b.Conditional == ConditionalNative || b.Conditional == ConditionalAuto {
			return keyError(prefix+".conditional", "the embedded backend needs lease: it ignores conditions on CopyObject and CompleteMultipartUpload")
		}
		if b.ConditionalBodyFraming == BodyFramingAWSChunked {
			// gofakes3 does not decode STREAMING-UNSIGNED-PAYLOAD-TRAILER: it
			// would store the framing as the object's bytes.
			return keyError(prefix+".conditional_body_framing", "the embedded backend supports only none or auto (which is none there): it does not read aws-chunked uploads")
		}
	case BackendS3:
		if err := validateURL(b.Endpoint); err != nil {
			return keyError(prefix+".endpoint", "%v", err)
		}
		if err := validateRegion(b.Region); err != nil {
			return keyError(prefix+".region", "%v", err)
		}
		if err := validateCredentials(b.Credentials, prefix+".credentials"); err != nil {
			return err
		}
	default:
		return keyError(prefix+".type", "must be %s or %s, not %q", BackendEmbedded, BackendS3, b.Type)
	}
	if err := oneOf(prefix+".addressing", b.Addressing, AddressingPath, AddressingVirtual); err != nil {
		return err
	}
	if err := oneOf(prefix+".checksums", b.Checksums, ChecksumsForward, ChecksumsVerifyOnly); err != nil {
		return err
	}
	if err := oneOf(prefix+".payload_hash", b.PayloadHash, PayloadHashUnsigned, PayloadHashForward); err != nil {
		return err
	}
	if err := oneOf(prefix+".conditional_body_framing", b.ConditionalBodyFraming, BodyFramingAuto, BodyFramingNone, BodyFramingAWSChunked); err != nil {
		return err
	}
	if err := validateConditional(b, prefix); err != nil {
		return err
	}
	if b.StartupChecksTimeout < 3*time.Second {
		return keyError(prefix+".startup_checks_timeout", "must be at least 3s (the probe needs about 2 s of races and a third for cleanup), not %s", b.StartupChecksTimeout)
	}
	if err := oneOf(prefix+".key_policy", b.KeyPolicy, KeyPolicyStrict, KeyPolicyNormalize, KeyPolicyOpaque); err != nil {
		return err
	}
	if err := validatePool(b.Pool, prefix+".pool"); err != nil {
		return err
	}
	for _, client := range sortedKeys(b.Buckets) {
		key := prefix + ".buckets." + client
		if !IsBucketName(client) {
			return keyError(key, "%q is not a valid S3 bucket name", client)
		}
		if backend := b.Buckets[client]; !IsBucketName(backend) {
			return keyError(key, "%q is not a valid S3 bucket name", backend)
		}
	}
	return nil
}

func validatePool(p Pool, key string) error {
	switch {
	case p.MaxIdleConnsPerHost < 1:
		return keyError(key+".max_idle_conns_per_host", "must be >= 1")
	case p.IdleConnTimeout <= 0:
		return keyError(key+".idle_conn_timeout", "must be > 0")
	case p.DialTimeout <= 0:
		return keyError(key+".dial_timeout", "must be > 0")
	case p.ResponseHeaderTimeout < 0:
		return keyError(key+".response_header_timeout", "must be >= 0 (0: no bound)")
	}
	return nil
}

// validateURL accepts an absolute http(s) base URL without path or query:
// s3cond appends bucket and key itself. Its messages show the URL without
// any user info, which may hold a password.
func validateURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("must be set (an http(s) URL)")
	}
	u, err := url.Parse(raw)
	if err == nil && u.User != nil {
		return fmt.Errorf("%q must not carry a user name or password; use the credentials keys", withoutUserInfo(u))
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%s is not an http(s) URL", quoteURL(raw))
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be a base URL without path, query or fragment", raw)
	}
	return nil
}

// withoutUserInfo is u with its user name and password removed.
func withoutUserInfo(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// quoteURL quotes a value that did not parse as a URL, unless it may hold
// user info (an '@'): then it is not shown at all.
func quoteURL(raw string) string {
	if strings.Contains(raw, "@") {
		return "the value"
	}
	return strconv.Quote(raw)
}

func validateCredentials(c Credentials, key string) error {
	switch c.Source {
	case CredentialsStatic:
		if c.AccessKeyID == "" {
			return keyError(key+".access_key_id", "must be set when source is static")
		}
		if c.SecretAccessKey == "" {
			return keyError(key+".secret_access_key", "must be set when source is static")
		}
	case CredentialsEnv:
		if c.AccessKeyIDEnv == "" {
			return keyError(key+".access_key_id_env", "must name an environment variable when source is env")
		}
		if c.SecretAccessKeyEnv == "" {
			return keyError(key+".secret_access_key_env", "must name an environment variable when source is env")
		}
	case CredentialsDefault:
	default:
		return keyError(key+".source", "must be %s, %s or %s, not %q", CredentialsStatic, CredentialsEnv, CredentialsDefault, c.Source)
	}
	return nil
}
