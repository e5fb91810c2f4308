package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// EnvPrefix starts every environment override: S3COND_ + the key path in
// upper case with "." (and list indices) joined by "_", e.g.
// S3COND_LEASE_DYNAMODB_ENDPOINT or S3COND_KEYS_0_SECRET.
const EnvPrefix = "S3COND"

// ConfigPathEnv is reserved for naming the config file; it is never a key.
const ConfigPathEnv = "S3COND_CONFIG"

// maxEnvListIndex bounds list entries created from the environment, so a
// typo such as S3COND_KEYS_99999_SECRET cannot allocate a huge list.
const maxEnvListIndex = 999

// applyEnv overlays every S3COND_* variable that names a key onto cfg. The
// names are derived from the yaml tags, so every key is overridable without a
// table to keep in step. It returns the S3COND_* variables that name no key.
func applyEnv(cfg *Config, vars map[string]string) ([]string, error) {
	pending := map[string]string{}
	for name, value := range vars {
		if strings.HasPrefix(name, EnvPrefix+"_") && name != ConfigPathEnv {
			pending[name] = value
		}
	}
	if err := overrideValue(reflect.ValueOf(cfg).Elem(), EnvPrefix, "", pending); err != nil {
		return nil, err
	}
	unused := make([]string, 0, len(pending))
	for name := range pending {
		unused = append(unused, name)
	}
	sort.Strings(unused)
	return unused, nil
}

// UnusedEnv lists the S3COND_* variables in env that name no config key
// (other than ConfigPathEnv and the variables c's *_env keys read), for a
// start-up warning. They are not errors, because tools around s3cond use the
// same prefix (S3COND_BIN, S3COND_E2E_TARGET, ...); but a typo such as
// S3COND_LEASE_TIMOUT should not pass unnoticed.
func (c *Config) UnusedEnv(env []string) []string {
	scratch := Default()
	scratch.Keys = nil
	unused, err := applyEnv(scratch, environment(env))
	if err != nil {
		return nil // Load reports that error itself
	}
	referenced := map[string]bool{}
	for _, name := range secretEnvNames(c) {
		referenced[name] = true
	}
	result := unused[:0]
	for _, name := range unused {
		if !referenced[name] {
			result = append(result, name)
		}
	}
	return result
}

// EnvName is the override variable for a key path such as "keys[0].secret".
func EnvName(key string) string {
	replacer := strings.NewReplacer(".", "_", "[", "_", "]", "")
	return EnvPrefix + "_" + strings.ToUpper(replacer.Replace(key))
}

func overrideValue(v reflect.Value, envName, key string, pending map[string]string) error {
	t := v.Type()
	switch {
	case isLeaf(t):
		text, ok := pending[envName]
		if !ok {
			return nil
		}
		delete(pending, envName)
		if err := setFromEnv(v, text); err != nil {
			return keyError(key, "%v (from %s)", err, envName)
		}
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			name := yamlName(t.Field(i))
			if name == "" || name == "-" {
				continue
			}
			if err := overrideValue(v.Field(i), envName+"_"+strings.ToUpper(name), joinKey(key, name), pending); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		highest, err := highestEnvIndex(envName, key, pending)
		if err != nil {
			return err
		}
		if highest >= v.Len() {
			grown := reflect.MakeSlice(t, highest+1, highest+1)
			reflect.Copy(grown, v)
			v.Set(grown)
		}
		for i := range v.Len() {
			if err := overrideValue(v.Index(i), envName+"_"+strconv.Itoa(i), fmt.Sprintf("%s[%d]", key, i), pending); err != nil {
				return err
			}
		}
	default:
		return keyError(key, "unsupported config type %s", t)
	}
	return nil
}

// highestEnvIndex finds the largest list index that any pending variable
// addresses under envName (e.g. 2 for S3COND_KEYS_2_SECRET), or -1.
func highestEnvIndex(envName, key string, pending map[string]string) (int, error) {
	highest := -1
	prefix := envName + "_"
	for name := range pending {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		digits, _, _ := strings.Cut(rest, "_")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			continue // not an index: reported later as naming no key
		}
		index, err := strconv.Atoi(digits)
		if err != nil || index > maxEnvListIndex {
			return 0, keyError(key, "list index %s in %s is larger than %d", digits, name, maxEnvListIndex)
		}
		highest = max(highest, index)
	}
	return highest, nil
}

// setFromEnv parses a variable's text: scalars as in YAML, lists as
// comma-separated values ("a,b"), the bucket mapping as "client=backend,...".
func setFromEnv(v reflect.Value, text string) error {
	switch v.Type() {
	case stringsType:
		list := []string{}
		for _, item := range strings.Split(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		v.Set(reflect.ValueOf(list))
		return nil
	case stringMapType:
		mapping := map[string]string{}
		for _, pair := range strings.Split(text, ",") {
			if pair = strings.TrimSpace(pair); pair == "" {
				continue
			}
			name, value, ok := strings.Cut(pair, "=")
			if !ok {
				return fmt.Errorf("%q is not a list of client=backend pairs", text)
			}
			mapping[strings.TrimSpace(name)] = strings.TrimSpace(value)
		}
		v.Set(reflect.ValueOf(mapping))
		return nil
	}
	return setScalar(v, text)
}

// secretEnvNames lists the variables that *_env keys point at.
func secretEnvNames(cfg *Config) []string {
	names := []string{
		cfg.Backend.Credentials.AccessKeyIDEnv, cfg.Backend.Credentials.SecretAccessKeyEnv,
		cfg.Lease.DynamoDB.Credentials.AccessKeyIDEnv, cfg.Lease.DynamoDB.Credentials.SecretAccessKeyEnv,
		cfg.Lease.Etcd.PasswordEnv,
	}
	for _, k := range cfg.Keys {
		names = append(names, k.SecretEnv)
	}
	for _, b := range cfg.Backends {
		names = append(names, b.Credentials.AccessKeyIDEnv, b.Credentials.SecretAccessKeyEnv)
	}
	return names
}
