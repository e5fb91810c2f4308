package config

import (
	"bytes"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// MaskedValue replaces secrets in Masked copies.
const MaskedValue = "****"

// Masked returns a deep copy with every field tagged secret:"true" that holds
// a value replaced by MaskedValue, for check-config output and logs.
func (c *Config) Masked() *Config {
	masked := *c
	masked.Keys = append([]Key(nil), c.Keys...)
	for i := range masked.Keys {
		masked.Keys[i].Buckets = append([]string(nil), c.Keys[i].Buckets...)
	}
	if c.Lease.SerializeBuckets != nil {
		masked.Lease.SerializeBuckets = make(map[string]string, len(c.Lease.SerializeBuckets))
		for k, v := range c.Lease.SerializeBuckets {
			masked.Lease.SerializeBuckets[k] = v
		}
	}
	masked.Lease.Etcd.Endpoints = append([]string(nil), c.Lease.Etcd.Endpoints...)
	masked.Backend.Buckets = copyMap(c.Backend.Buckets)
	masked.Backends = append([]Backend(nil), c.Backends...)
	for i := range masked.Backends {
		masked.Backends[i].Buckets = copyMap(c.Backends[i].Buckets)
	}
	maskSecrets(reflect.ValueOf(&masked).Elem())
	return &masked
}

func maskSecrets(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			field := v.Field(i)
			if t.Field(i).Tag.Get("secret") == "true" && field.Kind() == reflect.String {
				if field.String() != "" {
					field.SetString(MaskedValue)
				}
				continue
			}
			maskSecrets(field)
		}
	case reflect.Slice:
		for i := range v.Len() {
			maskSecrets(v.Index(i))
		}
	}
}

// Render writes c as YAML in config.yaml's layout; durations come out in Go
// syntax ("20s"). Pass c.Masked() for anything a person or a log will see.
func Render(c *Config) ([]byte, error) {
	var out bytes.Buffer
	encoder := yaml.NewEncoder(&out)
	encoder.SetIndent(2)
	if err := encoder.Encode(c); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	if err := encoder.Close(); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	return out.Bytes(), nil
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
