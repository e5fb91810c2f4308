// Package config loads s3cond's configuration: a YAML file (config.yaml at the
// repository root is the annotated schema), development defaults for every key
// the file leaves out, S3COND_* environment overrides, indirections to
// secrets held in environment variables, and validation that names the
// offending key in one line.
package config

import (
	"path/filepath"
	"time"
)

// The development key that Default configures. It is public knowledge, so a
// config file never inherits it: see Load.
const (
	DevAccessKeyID = "S3CONDDEVKEY"
	DevSecret      = "s3cond-dev-secret"
)

// DefaultBackendName names backend; backends[N] need names of their own.
const DefaultBackendName = "default"

// Accepted enumeration values.
const (
	BackendEmbedded = "embedded"
	BackendS3       = "s3"

	AddressingPath    = "path"
	AddressingVirtual = "virtual"

	CredentialsStatic  = "static"
	CredentialsEnv     = "env"
	CredentialsDefault = "default"

	ChecksumsForward    = "forward"
	ChecksumsVerifyOnly = "verify-only"

	PayloadHashUnsigned = "unsigned"
	PayloadHashForward  = "forward"

	BodyFramingNone       = "none"
	BodyFramingAWSChunked = "aws-chunked"
	// BodyFramingAuto frames when a start-up check finds the store reads
	// aws-chunked uploads and refuses unfinished ones; none otherwise.
	BodyFramingAuto = "auto"

	ConditionalLease  = "lease"
	ConditionalNative = "native"
	// ConditionalAuto probes the store at start-up: native when every
	// conditional write is, lease otherwise.
	ConditionalAuto = "auto"

	KeyPolicyStrict    = "strict"
	KeyPolicyNormalize = "normalize"
	KeyPolicyOpaque    = "opaque"

	AccessReadOnly  = "read-only"
	AccessReadWrite = "read-write"

	LeaseStoreEmbedded = "embedded"
	LeaseStoreDynamoDB = "dynamodb"

	KeyFormatBucketKey = "bucket-key"
	KeyFormatArrowRS   = "arrow-rs"
	LeaseStoreMemory   = "memory"

	SerializeConditionalOnly = "conditional-only"
	SerializeAllWrites       = "all-writes"

	LogFormatConsole = "console"
	LogFormatJSON    = "json"
)

// Config is the whole configuration. The yaml tags are the keys of config.yaml;
// fields tagged secret:"true" are hidden by Masked.
type Config struct {
	Server  Server  `yaml:"server"`
	DataDir string  `yaml:"data_dir"`
	Backend Backend `yaml:"backend"`
	// Backends are further backends, each serving the client buckets its
	// Buckets map lists; every other bucket goes to Backend.
	Backends []Backend `yaml:"backends,omitempty"`
	Keys     []Key     `yaml:"keys"`
	// Anonymous grants unsigned clients read access to some buckets.
	Anonymous Anonymous `yaml:"anonymous"`
	// Auth chooses which client signatures, besides SigV4, are accepted.
	Auth  Auth  `yaml:"auth"`
	Lease Lease `yaml:"lease"`
	Admin Admin `yaml:"admin"`
	Log   Log   `yaml:"log"`

	// The write policies list client buckets (names, "*" or patterns, as
	// for keys) whose writes must carry more than S3 asks by default; see
	// proxy/writepolicy.go. RequireConditionalWrites refuses a PutObject,
	// CopyObject or CompleteMultipartUpload without If-None-Match or
	// If-Match, as S3 does under a bucket policy on s3:if-none-match /
	// s3:if-match; RequireConditionalDeletes refuses a delete without
	// If-Match; CreateOnly takes every unconditional write as If-None-Match: *.
	RequireConditionalWrites  []string `yaml:"require_conditional_writes,flow,omitempty"`
	RequireConditionalDeletes []string `yaml:"require_conditional_deletes,flow,omitempty"`
	CreateOnly                []string `yaml:"create_only,flow,omitempty"`
}

// Server is the client-facing S3 API.
type Server struct {
	Listen  string        `yaml:"listen"`
	Region  string        `yaml:"region"`
	Domain  string        `yaml:"domain"`
	MaxSkew time.Duration `yaml:"max_skew"`
	// ShutdownGrace is how long requests in flight may run after SIGTERM.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`
	// BodyIdleTimeout is how long a request body may send nothing before
	// the request fails with 400 RequestTimeout, as on S3.
	BodyIdleTimeout time.Duration `yaml:"body_idle_timeout"`
	// ResponseWriteIdleTimeout is how long a write of a response may make
	// no progress (a client that stopped reading) before the connection is cut.
	ResponseWriteIdleTimeout time.Duration `yaml:"response_write_idle_timeout"`
	// MaxConnections caps the open client connections; past it a new one
	// is answered 503 SlowDown and closed (internal/frontconn).
	MaxConnections int `yaml:"max_connections"`
	// MaxUnauthenticatedRequests caps the requests in flight that have not
	// yet passed signature or POST-policy verification; past it, 503 SlowDown.
	MaxUnauthenticatedRequests int `yaml:"max_unauthenticated_requests"`
	// MaxUnauthenticatedRequestsPerAddress caps those of one client
	// address (an IPv6 client's /64).
	MaxUnauthenticatedRequestsPerAddress int `yaml:"max_unauthenticated_requests_per_address"`
	// MaxUnauthenticatedConnectionsPerAddress caps one client address's
	// open connections that have carried no authenticated request.
	MaxUnauthenticatedConnectionsPerAddress int `yaml:"max_unauthenticated_connections_per_address"`
	// MaxSignatureChecks caps the requests claiming a signature that are
	// being verified, a budget apart from unauthenticated work's.
	MaxSignatureChecks int `yaml:"max_signature_checks"`
	// PostFormTimeout bounds, in total, the reading of a POST Object form's
	// fields, which happens before anything is authenticated.
	PostFormTimeout time.Duration `yaml:"post_form_timeout"`
	TLS             TLS           `yaml:"tls"`
}

// TLS serves the S3 API over HTTPS when both files are set. The pair is read
// again on SIGHUP, so a renewed certificate needs no restart.
type TLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Enabled reports whether the client listener serves HTTPS.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Admin is the operators' listener: /metrics, /healthz, /readyz.
type Admin struct {
	// Listen is its address; empty disables it.
	Listen string `yaml:"listen"`
	// MaxConnections caps its open connections (idle ones are closed first).
	MaxConnections int `yaml:"max_connections"`
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// Backend is the S3-compatible store requests are forwarded to.
type Backend struct {
	// Name identifies the backend in logs and errors ("default" for backend).
	Name        string      `yaml:"name"`
	Type        string      `yaml:"type"`
	Endpoint    string      `yaml:"endpoint"`
	Region      string      `yaml:"region"`
	Addressing  string      `yaml:"addressing"`
	Credentials Credentials `yaml:"credentials"`
	Checksums   string      `yaml:"checksums"`
	// PayloadHash says what x-amz-content-sha256 s3cond sends with a body
	// whose hex SHA-256 the client signed and s3cond verified.
	PayloadHash string `yaml:"payload_hash"`
	Conditional string `yaml:"conditional"`
	// ConditionalBodyFraming says how a PutObject's body travels to the
	// store (every PutObject of known length, leased or not; the name is
	// from when only leased ones were framed): "aws-chunked" finishes the
	// stream only once the body verified and the write may land, so an
	// abort needs no TCP reset to reach the store; "auto" (the default)
	// frames where the store was found to honour it.
	ConditionalBodyFraming string `yaml:"conditional_body_framing"`
	// WritesInPlace is for stores that make an upload visible as it
	// arrives and keep what they got of one cut short (s3rver 3.7): a
	// leased PutObject then holds its lease and re-checks its condition
	// before its first byte goes to the store.
	WritesInPlace bool `yaml:"writes_in_place"`
	// SkipHeaderChecks skips the start-up checks of object lock and the
	// multipart conditions (they write scratch buckets): their headers are
	// then answered 501, as for a store found not to honour them.
	SkipHeaderChecks bool `yaml:"skip_header_checks"`
	// SkipRecordedETags keeps strict mode's lease rows from recording a
	// key's ETag after a write (proxy/leasedwrite/recorded.go): for a
	// store that acknowledges a write before a read sees it, where a
	// record would vouch for a state the store does not yet show.
	SkipRecordedETags bool `yaml:"skip_recorded_etags"`
	// ProbeBucket is the backend bucket the start-up probe writes its
	// scratch prefix in (conditional auto, and native unless NativeUnverified).
	ProbeBucket string `yaml:"probe_bucket"`
	// StartupChecksTimeout bounds all of the backend's start-up checks
	// together, cleanup included: the conditional probe (auto, native),
	// the body-framing check and the header checks run side by side
	// within it, before any listener opens.
	StartupChecksTimeout time.Duration `yaml:"startup_checks_timeout"`
	// ReprobeInterval is how often a probed backend (auto, native) is
	// probed again in the background; a verdict that got worse switches it
	// to leasing at once. Zero or negative: never (in a backends[] entry,
	// where an absent key takes the default, write -1s).
	ReprobeInterval time.Duration `yaml:"reprobe_interval"`
	// ReprobeOnStart probes at start-up even when data_dir holds a verdict
	// on the same store (same endpoint, probe bucket, Server header and
	// version), which is otherwise reused.
	ReprobeOnStart bool `yaml:"reprobe_on_start"`
	// NativeUnverified trusts conditional: native without probing the store.
	// Dangerous: a store that ignores or races conditions then loses writes.
	NativeUnverified bool `yaml:"native_unverified"`
	// CopyEmulation builds a CopyObject with destination conditions from
	// the store's conditional PutObject or CompleteMultipartUpload, for a
	// store that ignores a copy's conditions (versitygw v1.8.0). Only with
	// native: an emulated copy takes no lease (proxy/emulatedcopy.go).
	CopyEmulation bool `yaml:"copy_emulation"`
	// RefuseConditionalDeletes answers every conditional DeleteObject and
	// every DeleteObjects with a conditional entry 501 NotImplemented,
	// before anything reaches the store, so that auto may serve without
	// leases a store whose conditional delete is not atomic with its
	// writes (versitygw v1.8.0: docs/spec.md, "Lease-free plans").
	RefuseConditionalDeletes bool `yaml:"refuse_conditional_deletes"`
	// CopyEmulationSinglePutLimit is the largest source an emulated copy
	// streams through s3cond into one PutObject (MD5 ETag kept); larger
	// ones are copied on the store by parts (multipart ETag).
	CopyEmulationSinglePutLimit int `yaml:"copy_emulation_single_put_limit"`
	// KeyPolicy says which object keys may reach the store: strict,
	// normalize or opaque (proxy.KeyPolicy).
	KeyPolicy string `yaml:"key_policy"`
	// Buckets maps a client bucket name to the backend bucket name.
	Buckets map[string]string `yaml:"buckets"`
	Pool    Pool              `yaml:"pool"`
}

// Probes reports whether s3cond probes this backend at start-up.
func (b Backend) Probes() bool {
	return b.Conditional == ConditionalAuto || b.Conditional == ConditionalNative && !b.NativeUnverified
}

// Pool tunes the HTTP connections to the backend.
type Pool struct {
	MaxIdleConnsPerHost int           `yaml:"max_idle_conns_per_host"`
	IdleConnTimeout     time.Duration `yaml:"idle_conn_timeout"`
	DialTimeout         time.Duration `yaml:"dial_timeout"`
	// ResponseHeaderTimeout bounds the wait for the backend's response
	// headers once the request is sent; 0 means no bound.
	ResponseHeaderTimeout time.Duration `yaml:"response_header_timeout"`
}

// Credentials are AWS credentials s3cond signs with. After Load, a source of
// "env" has AccessKeyID and SecretAccessKey filled from the named variables,
// so users of the config read the values the same way for "static" and "env".
type Credentials struct {
	Source             string `yaml:"source"`
	AccessKeyID        string `yaml:"access_key_id"`
	SecretAccessKey    string `yaml:"secret_access_key" secret:"true"`
	AccessKeyIDEnv     string `yaml:"access_key_id_env"`
	SecretAccessKeyEnv string `yaml:"secret_access_key_env"`
}

// isSet reports whether any credential setting differs from the default
// (the AWS default chain, nothing named).
func (c Credentials) isSet() bool {
	return (c.Source != "" && c.Source != CredentialsDefault) || c.AccessKeyID != "" || c.SecretAccessKey != "" ||
		c.AccessKeyIDEnv != "" || c.SecretAccessKeyEnv != ""
}

// Key is one client access key. After Load, Secret holds the secret even when
// it came from SecretEnv.
type Key struct {
	AccessKeyID string   `yaml:"access_key_id"`
	Secret      string   `yaml:"secret" secret:"true"`
	SecretEnv   string   `yaml:"secret_env"`
	Buckets     []string `yaml:"buckets,flow"`
	Access      string   `yaml:"access"`
}

// Anonymous is the grant for unsigned requests: GET and HEAD of objects and
// object listings on the buckets listed (names, "*" or patterns, as for
// keys). Off, with no buckets, by default; read-only is the only access.
type Anonymous struct {
	Buckets []string `yaml:"buckets,flow,omitempty"`
	Access  string   `yaml:"access"`
}

// Auth lists the legacy signature schemes accepted beside SigV4, all off by
// default.
type Auth struct {
	// SignatureV2 accepts AWS Signature Version 2 (header and presigned
	// URL) for tools that send nothing else, such as aws-cli v1's presign.
	// Off by default: SigV2 signs neither the body nor Host
	// (docs/security.md, "Signature Version 2").
	SignatureV2 bool `yaml:"signature_v2"`
}

// CanWrite reports whether the key has read-write access.
func (k Key) CanWrite() bool { return k.Access == AccessReadWrite }

// Lease configures the lease protocol that gives the backend conditional writes.
type Lease struct {
	Store            string        `yaml:"store"`
	Path             string        `yaml:"path"`
	DynamoDB         DynamoDB      `yaml:"dynamodb"`
	Etcd             Etcd          `yaml:"etcd"`
	Timeout          time.Duration `yaml:"timeout"`
	MaxClockSkewRate float64       `yaml:"max_clock_skew_rate"`
	PollInterval     time.Duration `yaml:"poll_interval"`
	TTL              time.Duration `yaml:"ttl"`
	WaitBudget       time.Duration `yaml:"wait_budget"`
	// MinStoreMiBPerSecond is the rate, in MiB/s, at which the store is
	// assumed to copy at least: a leased CopyObject or
	// CompleteMultipartUpload holds its lease for timeout plus its source's
	// or parts' bytes at this rate, since the store goes on with the work
	// after a holder that vanished.
	MinStoreMiBPerSecond float64 `yaml:"min_store_mib_per_second"`
	// MaxSizedTimeout caps a sized lease: no lease row is written longer,
	// so every wait that stands for rows nobody can read (a discarded
	// embedded lease file, a lost table) is max(timeout, this) ×
	// max_clock_skew_rate (dynamolease.Options.LongestTakeoverWait).
	MaxSizedTimeout time.Duration `yaml:"max_sized_timeout"`
	// Serialize is which writes take a lease: conditional ones only, or
	// every write (strict mode). SerializeBuckets overrides it per client bucket.
	Serialize        string            `yaml:"serialize"`
	SerializeBuckets map[string]string `yaml:"serialize_buckets,omitempty"`
}

// maxLeaseRowTimeout is dynamolease.MaxSizedTimeout: the longest lease
// timeout a reader believes a row carries.
const maxLeaseRowTimeout = 24 * time.Hour

// TakeoverAfter is how long a waiter lets another holder's generation stand
// before taking the lease over: timeout × max_clock_skew_rate.
func (l Lease) TakeoverAfter() time.Duration {
	return time.Duration(float64(l.Timeout) * l.MaxClockSkewRate)
}

// DynamoDB is the shared lease table.
type DynamoDB struct {
	Table       string      `yaml:"table"`
	Region      string      `yaml:"region"`
	Endpoint    string      `yaml:"endpoint"`
	Credentials Credentials `yaml:"credentials"`
	// KeyFormat names the rows: bucket-key ("<bucket>/<key>", any number
	// of buckets) or arrow-rs (the key alone, as arrow-rs object_store's
	// DynamoCommit; then Bucket is the one backend bucket leased).
	KeyFormat string `yaml:"key_format"`
	Bucket    string `yaml:"bucket"`
}

// Log configures zerolog.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// LeasePath is the embedded lease store's file: lease.path, or
// data_dir/leases.db when that is empty.
func (c *Config) LeasePath() string {
	if c.Lease.Path != "" {
		return c.Lease.Path
	}
	return filepath.Join(c.DataDir, "leases.db")
}

// Default returns the development defaults: everything embedded under
// ./s3cond-data and one well-known development key.
func Default() *Config {
	return &Config{
		Server: Server{
			Listen:        "127.0.0.1:9000",
			Region:        "us-east-1",
			MaxSkew:       15 * time.Minute,
			ShutdownGrace: 30 * time.Second,
			// S3's own: about 20 s without a byte of the body.
			BodyIdleTimeout:            20 * time.Second,
			ResponseWriteIdleTimeout:   60 * time.Second,
			MaxConnections:             4096,
			MaxUnauthenticatedRequests: 256,
			// A page uploads over a few connections; an office behind one
			// NAT address has many pages.
			MaxUnauthenticatedRequestsPerAddress:    32,
			MaxUnauthenticatedConnectionsPerAddress: 512,
			MaxSignatureChecks:                      1024,
			PostFormTimeout:                         30 * time.Second,
		},
		DataDir: "./s3cond-data",
		Backend: Backend{
			Name:       DefaultBackendName,
			Type:       BackendEmbedded,
			Region:     "us-east-1",
			Addressing: AddressingPath,
			Credentials: Credentials{
				Source: CredentialsDefault,
			},
			// The embedded store (gofakes3) keeps every x-amz-* request header
			// as object metadata and returns it on GET/HEAD, so forwarded
			// checksums come back to clients that ask for checksum mode.
			Checksums:   ChecksumsForward,
			PayloadHash: PayloadHashUnsigned,
			Conditional: ConditionalLease,
			// Aborts safe by default (issue 33): framed wherever a start-up
			// check finds the store refuses an unfinished aws-chunked stream
			// (versitygw v1.8.0 does); the embedded store is never framed.
			ConditionalBodyFraming: BodyFramingAuto,
			KeyPolicy:              KeyPolicyStrict,
			// Within a liveness probe's patience: no listener opens before
			// the checks end (issue 35: the probe alone once took 60 s).
			StartupChecksTimeout: 15 * time.Second,
			ReprobeInterval:      6 * time.Hour,
			// The AWS CLI's multipart threshold (proxy.CopyEmulation).
			CopyEmulationSinglePutLimit: 8 << 20,
			Pool: Pool{
				MaxIdleConnsPerHost: 256,
				IdleConnTimeout:     90 * time.Second,
				DialTimeout:         5 * time.Second,
			},
		},
		Keys: []Key{{
			AccessKeyID: DevAccessKeyID,
			Secret:      DevSecret,
			Buckets:     []string{"*"},
			Access:      AccessReadWrite,
		}},
		Anonymous: Anonymous{Access: AccessReadOnly},
		Lease: Lease{
			Store: LeaseStoreEmbedded,
			DynamoDB: DynamoDB{
				Table:     "s3cond-leases",
				Region:    "us-east-1",
				KeyFormat: KeyFormatBucketKey,
				Credentials: Credentials{
					Source: CredentialsDefault,
				},
			},
			Etcd:             defaultEtcd(),
			Timeout:          20 * time.Second,
			MaxClockSkewRate: 3,
			PollInterval:     100 * time.Millisecond,
			TTL:              time.Hour,
			WaitBudget:       10 * time.Second,
			// 16 MiB/s: a 5 GiB copy holds its lease 20 s + 320 s.
			MinStoreMiBPerSecond: 16,
			// 6 min: S3's largest CopyObject (5 GiB) at 16 MiB/s, after 20 s.
			MaxSizedTimeout: 6 * time.Minute,
			Serialize:       SerializeConditionalOnly,
		},
		Admin: Admin{Listen: "127.0.0.1:9001", MaxConnections: 64, IdleTimeout: 2 * time.Minute},
		Log: Log{
			Level:  "info",
			Format: LogFormatConsole,
		},
	}
}

// SerializesAllWrites reports whether every write to the client bucket
// takes a lease (strict mode), per lease.serialize_buckets or lease.serialize.
func (l Lease) SerializesAllWrites(bucket string) bool {
	if mode, ok := l.SerializeBuckets[bucket]; ok {
		return mode == SerializeAllWrites
	}
	return l.Serialize == SerializeAllWrites
}

// namedBackendDefaults fills the keys a backends[N] entry left out with
// backend's defaults for a real S3 endpoint.
func namedBackendDefaults(b Backend) Backend {
	d := Default().Backend
	if b.Type == "" {
		b.Type = BackendS3
	}
	if b.Region == "" {
		b.Region = d.Region
	}
	if b.Addressing == "" {
		b.Addressing = d.Addressing
	}
	if b.Credentials.Source == "" {
		b.Credentials.Source = d.Credentials.Source
	}
	if b.Checksums == "" {
		b.Checksums = ChecksumsVerifyOnly
	}
	if b.PayloadHash == "" {
		b.PayloadHash = d.PayloadHash
	}
	if b.Conditional == "" {
		b.Conditional = d.Conditional
	}
	if b.ConditionalBodyFraming == "" {
		b.ConditionalBodyFraming = d.ConditionalBodyFraming
	}
	if b.KeyPolicy == "" {
		b.KeyPolicy = d.KeyPolicy
	}
	if b.StartupChecksTimeout == 0 {
		b.StartupChecksTimeout = d.StartupChecksTimeout
	}
	if b.ReprobeInterval == 0 {
		b.ReprobeInterval = d.ReprobeInterval
	}
	if b.CopyEmulationSinglePutLimit == 0 {
		b.CopyEmulationSinglePutLimit = d.CopyEmulationSinglePutLimit
	}
	if b.Pool == (Pool{}) {
		b.Pool = d.Pool
	}
	return b
}
