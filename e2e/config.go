package e2e

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Config mirrors s3cond's YAML configuration (see config.yaml at the
// repository root); the harness renders one per test.
type Config struct {
	Server  ServerConfig  `yaml:"server"`
	DataDir string        `yaml:"data_dir"`
	Backend BackendConfig `yaml:"backend"`
	Keys    []KeyConfig   `yaml:"keys"`
	// Anonymous is the grant for unsigned requests (nil: none).
	Anonymous *AnonymousConfig `yaml:"anonymous,omitempty"`
	Lease     LeaseConfig      `yaml:"lease"`
	Log       LogConfig        `yaml:"log"`
}

type ServerConfig struct {
	Listen          string `yaml:"listen"`
	Region          string `yaml:"region"`
	MaxSkew         string `yaml:"max_skew,omitempty"`
	BodyIdleTimeout string `yaml:"body_idle_timeout,omitempty"`
}

type BackendConfig struct {
	Type        string            `yaml:"type"`
	Endpoint    string            `yaml:"endpoint,omitempty"`
	Region      string            `yaml:"region"`
	Addressing  string            `yaml:"addressing"`
	Credentials CredentialsConfig `yaml:"credentials"`
	Checksums   string            `yaml:"checksums,omitempty"`
	Conditional string            `yaml:"conditional,omitempty"`
	// Buckets maps client bucket names to the store's (backend.buckets).
	Buckets map[string]string `yaml:"buckets,omitempty"`
	// NativeUnverified, CopyEmulation and CopyEmulationSinglePutLimit are
	// backend.native_unverified, copy_emulation and its limit.
	NativeUnverified            bool `yaml:"native_unverified,omitempty"`
	CopyEmulation               bool `yaml:"copy_emulation,omitempty"`
	CopyEmulationSinglePutLimit int  `yaml:"copy_emulation_single_put_limit,omitempty"`
}

type CredentialsConfig struct {
	Source          string `yaml:"source"`
	AccessKeyID     string `yaml:"access_key_id,omitempty"`
	SecretAccessKey string `yaml:"secret_access_key,omitempty"`
}

type KeyConfig struct {
	AccessKeyID string   `yaml:"access_key_id"`
	Secret      string   `yaml:"secret"`
	Buckets     []string `yaml:"buckets"`
	Access      string   `yaml:"access"`
}

type AnonymousConfig struct {
	Buckets []string `yaml:"buckets"`
	Access  string   `yaml:"access"`
}

type LeaseConfig struct {
	Store            string         `yaml:"store"`
	DynamoDB         DynamoDBConfig `yaml:"dynamodb"`
	Timeout          string         `yaml:"timeout,omitempty"`
	MaxClockSkewRate float64        `yaml:"max_clock_skew_rate,omitempty"`
	PollInterval     string         `yaml:"poll_interval,omitempty"`
	TTL              string         `yaml:"ttl,omitempty"`
	WaitBudget       string         `yaml:"wait_budget,omitempty"`
	// MaxSizedTimeout and MinStoreMiBPerSecond size the leases of copies
	// and completions (lease.max_sized_timeout, min_store_mib_per_second).
	MaxSizedTimeout      string  `yaml:"max_sized_timeout,omitempty"`
	MinStoreMiBPerSecond float64 `yaml:"min_store_mib_per_second,omitempty"`
}

type DynamoDBConfig struct {
	Table       string            `yaml:"table,omitempty"`
	Region      string            `yaml:"region,omitempty"`
	Endpoint    string            `yaml:"endpoint,omitempty"`
	Credentials CredentialsConfig `yaml:"credentials"`
}

type LogConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// YAML renders c as s3cond reads it.
func (c Config) YAML() (string, error) {
	out, err := yaml.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("render s3cond config: %w", err)
	}
	return string(out), nil
}
