package config

import "fmt"

// validateWritePolicies checks that every entry of the write policies is a
// bucket name or pattern, as a key's buckets are: a typo must not leave a
// bucket silently unprotected.
func (c *Config) validateWritePolicies() error {
	policies := []struct {
		key      string
		patterns []string
	}{
		{"require_conditional_writes", c.RequireConditionalWrites},
		{"require_conditional_deletes", c.RequireConditionalDeletes},
		{"create_only", c.CreateOnly},
	}
	for _, policy := range policies {
		for i, pattern := range policy.patterns {
			if !isBucketPattern(pattern) {
				return keyError(fmt.Sprintf("%s[%d]", policy.key, i), "%q is neither a bucket name nor a pattern such as logs-*", pattern)
			}
		}
	}
	return nil
}
