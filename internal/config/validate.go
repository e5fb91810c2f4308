package config

import (
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MaxWaitBudget bounds lease.wait_budget. While a conditional write waits for
// a conflicting one, its body is held back from the backend, and S3 drops a
// request that sends nothing for about 20 s; a longer budget would turn a
// 409 the client can retry into a broken connection.
const MaxWaitBudget = 20 * time.Second

var (
	logLevels = []string{"debug", "info", "warn", "error"}
	// bucketPatternChars are what a key's bucket pattern may contain:
	// bucket-name characters plus path.Match's metacharacters.
	bucketPatternChars = "abcdefghijklmnopqrstuvwxyz0123456789.-*?[]^"
)

// Validate checks the whole configuration and returns the first problem as
// an *Error naming its key. Checks run in file order, so the line is stable.
func (c *Config) Validate() error {
	checks := []func() error{
		c.validateServer,
		c.validateDataDir,
		c.validateBackend,
		c.validateKeys,
		c.validateAnonymous,
		c.validateWritePolicies,
		c.validateLease,
		c.validateAdmin,
		c.validateLog,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateServer() error {
	s := c.Server
	if err := validateListen(s.Listen); err != nil {
		return keyError("server.listen", "%q %v", s.Listen, err)
	}
	if err := validateRegion(s.Region); err != nil {
		return keyError("server.region", "%v", err)
	}
	if s.Domain != "" && !isDomainName(s.Domain) {
		return keyError("server.domain", "%q is not a bare domain name such as s3.example.com (no scheme, port or path)", s.Domain)
	}
	if s.MaxSkew <= 0 {
		return keyError("server.max_skew", "must be > 0")
	}
	if s.ShutdownGrace <= 0 {
		return keyError("server.shutdown_grace", "must be > 0")
	}
	if s.BodyIdleTimeout <= 0 {
		return keyError("server.body_idle_timeout", "must be > 0: a body that stops arriving would hold its sockets and lease forever")
	}
	if s.ResponseWriteIdleTimeout <= 0 {
		return keyError("server.response_write_idle_timeout", "must be > 0: a client that stops reading would hold its sockets forever")
	}
	if s.MaxConnections <= 0 {
		return keyError("server.max_connections", "must be > 0: without a cap, idle connections exhaust memory and file descriptors")
	}
	if s.MaxUnauthenticatedRequests <= 0 {
		return keyError("server.max_unauthenticated_requests", "must be > 0: without a cap, anonymous requests exhaust memory")
	}
	if s.MaxUnauthenticatedRequestsPerAddress <= 0 {
		return keyError("server.max_unauthenticated_requests_per_address", "must be > 0: without it, one address takes every unauthenticated slot")
	}
	if s.MaxUnauthenticatedConnectionsPerAddress <= 0 {
		return keyError("server.max_unauthenticated_connections_per_address", "must be > 0: without it, one address fills the connection cap")
	}
	if s.MaxSignatureChecks <= 0 {
		return keyError("server.max_signature_checks", "must be > 0")
	}
	if s.PostFormTimeout <= 0 {
		return keyError("server.post_form_timeout", "must be > 0: an anonymous form that trickles in would hold its connection forever")
	}
	// Half a pair would silently serve plain HTTP where HTTPS was meant.
	if s.TLS.CertFile == "" && s.TLS.KeyFile != "" {
		return keyError("server.tls.cert_file", "must be set when server.tls.key_file is")
	}
	if s.TLS.KeyFile == "" && s.TLS.CertFile != "" {
		return keyError("server.tls.key_file", "must be set when server.tls.cert_file is")
	}
	return nil
}

func (c *Config) validateAdmin() error {
	if c.Admin.Listen == "" {
		return nil
	}
	if err := validateListen(c.Admin.Listen); err != nil {
		return keyError("admin.listen", "%q %v", c.Admin.Listen, err)
	}
	if c.Admin.Listen == c.Server.Listen {
		return keyError("admin.listen", "%q is also server.listen; the admin listener needs its own address", c.Admin.Listen)
	}
	if c.Admin.MaxConnections <= 0 {
		return keyError("admin.max_connections", "must be > 0: without a cap, the admin listener exhausts memory and file descriptors")
	}
	if c.Admin.IdleTimeout <= 0 {
		return keyError("admin.idle_timeout", "must be > 0: idle admin connections would stay open forever")
	}
	return nil
}

func validateListen(listen string) error {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("is not a host:port address")
	}
	number, err := strconv.Atoi(port)
	if err != nil || number < 0 || number > 65535 {
		return fmt.Errorf("has no valid port (0-65535)")
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("has an invalid host")
	}
	return nil
}

func validateRegion(region string) error {
	if region == "" {
		return fmt.Errorf("must be set (e.g. us-east-1)")
	}
	if strings.ContainsAny(region, " \t/") {
		return fmt.Errorf("%q is not a region name", region)
	}
	return nil
}

func isDomainName(domain string) bool {
	if strings.ContainsAny(domain, ":/ @") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return false
	}
	for _, label := range strings.Split(domain, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
	}
	return len(domain) <= 253
}

func (c *Config) validateDataDir() error {
	needsDataDir := c.Backend.Type == BackendEmbedded ||
		(c.Lease.Store == LeaseStoreEmbedded && c.Lease.Path == "")
	if needsDataDir && strings.TrimSpace(c.DataDir) == "" {
		return keyError("data_dir", "must be set for the embedded backend or lease store")
	}
	return nil
}

func (c *Config) validateKeys() error {
	if len(c.Keys) == 0 {
		return keyError("keys", "at least one client key is required (the development key applies only without a config file)")
	}
	firstUse := map[string]int{}
	for i, k := range c.Keys {
		key := fmt.Sprintf("keys[%d]", i)
		switch {
		case k.AccessKeyID == "":
			return keyError(key+".access_key_id", "must be set")
		case strings.ContainsAny(k.AccessKeyID, " \t\r\n/,="):
			return keyError(key+".access_key_id", "%q must not contain spaces, '/', ',' or '='", k.AccessKeyID)
		}
		if first, dup := firstUse[k.AccessKeyID]; dup {
			return keyError(key+".access_key_id", "%q is already used by keys[%d]", k.AccessKeyID, first)
		}
		firstUse[k.AccessKeyID] = i
		if k.Secret == "" {
			return keyError(key+".secret", "must be set (or name an environment variable in secret_env)")
		}
		if len(k.Buckets) == 0 {
			return keyError(key+".buckets", "must list at least one bucket (\"*\" for all)")
		}
		for j, pattern := range k.Buckets {
			if !isBucketPattern(pattern) {
				return keyError(fmt.Sprintf("%s.buckets[%d]", key, j), "%q is neither a bucket name nor a pattern such as logs-*", pattern)
			}
		}
		if err := oneOf(key+".access", k.Access, AccessReadOnly, AccessReadWrite); err != nil {
			return err
		}
	}
	return nil
}

// validateAnonymous allows read-only anonymous grants only: an unsigned
// write would run with the store's key on behalf of anyone.
func (c *Config) validateAnonymous() error {
	a := c.Anonymous
	for j, pattern := range a.Buckets {
		if !isBucketPattern(pattern) {
			return keyError(fmt.Sprintf("anonymous.buckets[%d]", j), "%q is neither a bucket name nor a pattern such as logs-*", pattern)
		}
	}
	if a.Access != AccessReadOnly {
		return keyError("anonymous.access", "must be %s (anonymous clients may only read), not %q", AccessReadOnly, a.Access)
	}
	return nil
}

func (c *Config) validateLease() error {
	l := c.Lease
	switch l.Store {
	case LeaseStoreEmbedded, LeaseStoreMemory:
	case LeaseStoreDynamoDB:
		d := l.DynamoDB
		if d.Table == "" {
			return keyError("lease.dynamodb.table", "must be set when lease.store is dynamodb")
		}
		if err := validateRegion(d.Region); err != nil {
			return keyError("lease.dynamodb.region", "%v", err)
		}
		if d.Endpoint != "" {
			if err := validateURL(d.Endpoint); err != nil {
				return keyError("lease.dynamodb.endpoint", "%v", err)
			}
		}
		if err := validateCredentials(d.Credentials, "lease.dynamodb.credentials"); err != nil {
			return err
		}
		if err := validateKeyFormat(d); err != nil {
			return err
		}
	case LeaseStoreEtcd:
		if err := validateEtcd(l.Etcd); err != nil {
			return err
		}
	default:
		return keyError("lease.store", "must be %s, %s, %s or %s, not %q", LeaseStoreEmbedded, LeaseStoreDynamoDB, LeaseStoreEtcd, LeaseStoreMemory, l.Store)
	}
	switch {
	case l.Timeout <= 0:
		return keyError("lease.timeout", "must be > 0")
	case l.MaxClockSkewRate < 1:
		return keyError("lease.max_clock_skew_rate", "must be >= 1")
	case l.PollInterval <= 0:
		return keyError("lease.poll_interval", "must be > 0")
	case l.PollInterval > l.Timeout:
		return keyError("lease.poll_interval", "must not be longer than lease.timeout (%s)", l.Timeout)
	case l.TTL <= l.TakeoverAfter():
		return keyError("lease.ttl", "must be longer than lease.timeout × lease.max_clock_skew_rate (%s), or records could vanish while they still guard a write", l.TakeoverAfter())
	case l.WaitBudget <= 0:
		return keyError("lease.wait_budget", "must be > 0")
	case l.WaitBudget >= MaxWaitBudget:
		return keyError("lease.wait_budget", "must be shorter than %s: the held-back body would outlast the backend's idle-request timeout", MaxWaitBudget)
	case !(l.MinStoreMiBPerSecond > 0):
		return keyError("lease.min_store_mib_per_second", "must be > 0: it sizes the lease of a copy or a completion by the store's slowest rate")
	case l.MaxSizedTimeout < l.Timeout:
		return keyError("lease.max_sized_timeout", "must be at least lease.timeout (%s)", l.Timeout)
	case l.MaxSizedTimeout > maxLeaseRowTimeout:
		return keyError("lease.max_sized_timeout", "must be at most %s, the longest lease a reader believes a row carries", maxLeaseRowTimeout)
	}
	if err := oneOf("lease.serialize", l.Serialize, SerializeConditionalOnly, SerializeAllWrites); err != nil {
		return err
	}
	for _, bucket := range sortedKeys(l.SerializeBuckets) {
		if !IsBucketName(bucket) {
			return keyError("lease.serialize_buckets", "%q is not a valid bucket name", bucket)
		}
		if err := oneOf("lease.serialize_buckets."+bucket, l.SerializeBuckets[bucket], SerializeConditionalOnly, SerializeAllWrites); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateLog() error {
	if err := oneOf("log.level", c.Log.Level, logLevels...); err != nil {
		return err
	}
	return oneOf("log.format", c.Log.Format, LogFormatConsole, LogFormatJSON)
}

func oneOf(key, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	quoted := make([]string, len(allowed))
	copy(quoted, allowed)
	last := len(quoted) - 1
	choices := strings.Join(quoted[:last], ", ") + " or " + quoted[last]
	if value == "" {
		return keyError(key, "must be %s", choices)
	}
	return keyError(key, "must be %s, not %q", choices, value)
}

// IsBucketName reports whether name is a valid S3 bucket name: 3–63
// characters of lowercase letters, digits, '.' and '-', starting and ending
// with a letter or digit, without "..".
func IsBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 || strings.Contains(name, "..") {
		return false
	}
	for i := range len(name) {
		ch := name[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9'
		if !alnum && ((ch != '.' && ch != '-') || i == 0 || i == len(name)-1) {
			return false
		}
	}
	return true
}

func isBucketPattern(pattern string) bool {
	if !strings.ContainsAny(pattern, "*?[") {
		return IsBucketName(pattern)
	}
	if strings.Trim(pattern, bucketPatternChars) != "" {
		return false
	}
	_, err := path.Match(pattern, "")
	return err == nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateKeyFormat: rows in arrow-rs format carry no bucket, so the table
// can lease one backend bucket only, and the config must name it.
func validateKeyFormat(d DynamoDB) error {
	switch d.KeyFormat {
	case KeyFormatBucketKey:
		if d.Bucket != "" {
			return keyError("lease.dynamodb.bucket", "is only for key_format %s", KeyFormatArrowRS)
		}
	case KeyFormatArrowRS:
		if d.Bucket == "" {
			return keyError("lease.dynamodb.bucket", "must name the one backend bucket leased when key_format is %s (its rows carry no bucket)", KeyFormatArrowRS)
		}
		if !IsBucketName(d.Bucket) {
			return keyError("lease.dynamodb.bucket", "%q is not a valid S3 bucket name", d.Bucket)
		}
	default:
		return keyError("lease.dynamodb.key_format", "must be %s or %s, not %q", KeyFormatBucketKey, KeyFormatArrowRS, d.KeyFormat)
	}
	return nil
}

// validateConditional checks backend.conditional and what it needs: a
// probe bucket whenever the store is probed at start-up.
func validateConditional(b Backend, prefix string) error {
	if err := oneOf(prefix+".conditional", b.Conditional, ConditionalLease, ConditionalNative, ConditionalAuto); err != nil {
		return err
	}
	if b.NativeUnverified && b.Conditional != ConditionalNative {
		return keyError(prefix+".native_unverified", "is set, but %s.conditional is %s, not native", prefix, b.Conditional)
	}
	if b.CopyEmulation && b.Conditional == ConditionalLease {
		return keyError(prefix+".copy_emulation", "is set, but %s.conditional is lease: an emulated copy takes no lease, and would race leased writes (use auto, which emulates only on a backend it serves without leases, or native)", prefix)
	}
	if b.CopyEmulationSinglePutLimit < 1 || b.CopyEmulationSinglePutLimit > 5<<30 {
		return keyError(prefix+".copy_emulation_single_put_limit", "must be between 1 and 5368709120 bytes (S3's largest copy source), not %d", b.CopyEmulationSinglePutLimit)
	}
	if b.Probes() && !IsBucketName(b.ProbeBucket) {
		return keyError(prefix+".probe_bucket", "must name a backend bucket the start-up probe may write a scratch prefix in (conditional %s probes the store; %q is not a bucket name)", b.Conditional, b.ProbeBucket)
	}
	return nil
}
