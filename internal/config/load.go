package config

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load builds the configuration: defaults, then the YAML file at path (unless
// path is ""), then S3COND_* overrides from env, then secrets named by *_env
// keys, and validates the result. env has the shape of os.Environ().
// S3COND_* variables that name no key are ignored here; see UnusedEnv.
//
// The development key of Default is kept only when neither a file nor
// S3COND_KEYS_* variables define keys, so a production setup cannot silently
// inherit a secret that is printed in the docs (for example by overriding
// only the dev key's ID).
func Load(path string, env []string) (*Config, error) {
	cfg := Default()
	// backend.type is inferred below when neither the file nor the
	// environment sets it.
	cfg.Backend.Type = ""
	vars := environment(env)
	if definesKeys(vars) {
		cfg.Keys = nil
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		cfg.Keys = nil
		if err := decodeYAML(data, cfg); err != nil {
			return nil, err
		}
	}
	if _, err := applyEnv(cfg, vars); err != nil {
		return nil, err
	}
	inferBackendType(&cfg.Backend)
	for i := range cfg.Backends {
		cfg.Backends[i] = namedBackendDefaults(cfg.Backends[i])
	}
	if err := resolveSecrets(cfg, vars); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// inferBackendType fills in a backend.type left unset: s3 when an endpoint
// is set (a config naming a store means that store), else the embedded
// development store. An explicit type is never changed; Validate refuses
// type embedded with an endpoint or credentials.
func inferBackendType(b *Backend) {
	if b.Type != "" {
		return
	}
	b.Type = BackendEmbedded
	if b.Endpoint != "" {
		b.Type = BackendS3
	}
}

// decodeYAML overlays the document in data onto cfg. It walks the YAML tree
// itself instead of calling yaml.Unmarshal so that every problem names the
// full key path ("backend.endpont") rather than a Go type.
func decodeYAML(data []byte, cfg *Config) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return &Error{Problem: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if root.Kind == 0 {
		return nil // empty file: all defaults
	}
	return decodeNode(&root, reflect.ValueOf(cfg).Elem(), "")
}

func decodeNode(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // a key without a value keeps its default
	}
	t := v.Type()
	switch {
	case isLeaf(t):
		return decodeLeaf(n, v, key)
	case t.Kind() == reflect.Struct:
		return decodeStruct(n, v, key)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if n.Kind != yaml.SequenceNode {
			return nodeError(n, key, "must be a list")
		}
		list := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := decodeNode(item, list.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
		v.Set(list)
		return nil
	}
	return nodeError(n, key, fmt.Sprintf("unsupported config type %s", t))
}

func decodeStruct(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.MappingNode {
		return nodeError(n, key, "must be a mapping of keys")
	}
	fields := structFields(v.Type())
	firstLine := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, value := n.Content[i], n.Content[i+1]
		child := joinKey(key, name.Value)
		if name.Kind != yaml.ScalarNode {
			return nodeError(name, key, "keys must be plain names")
		}
		if line, dup := firstLine[name.Value]; dup {
			return nodeError(name, child, fmt.Sprintf("set twice (first on line %d)", line))
		}
		firstLine[name.Value] = name.Line
		index, known := fields[name.Value]
		if !known {
			return nodeError(name, child, unknownKeyProblem(name.Value, fields))
		}
		if err := decodeNode(value, v.Field(index), child); err != nil {
			return err
		}
	}
	return nil
}

func decodeLeaf(n *yaml.Node, v reflect.Value, key string) error {
	t := v.Type()
	switch t {
	case stringsType:
		if n.Kind != yaml.SequenceNode {
			return nodeError(n, key, "must be a list of strings")
		}
		list := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			if item.Kind == yaml.AliasNode {
				item = item.Alias
			}
			if item.Kind != yaml.ScalarNode {
				return nodeError(item, key, "must be a list of strings")
			}
			list = append(list, item.Value)
		}
		v.Set(reflect.ValueOf(list))
		return nil
	case stringMapType:
		if n.Kind != yaml.MappingNode {
			return nodeError(n, key, "must be a mapping of names to names")
		}
		mapping := make(map[string]string, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			name, value := n.Content[i], n.Content[i+1]
			if value.Kind == yaml.AliasNode {
				value = value.Alias
			}
			if name.Kind != yaml.ScalarNode || value.Kind != yaml.ScalarNode {
				return nodeError(name, key, "must be a mapping of names to names")
			}
			if _, dup := mapping[name.Value]; dup {
				return nodeError(name, joinKey(key, name.Value), "set twice")
			}
			mapping[name.Value] = value.Value
			if value.Tag == "!!null" {
				mapping[name.Value] = ""
			}
		}
		v.Set(reflect.ValueOf(mapping))
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, key, "must be a single value, not a list or mapping")
	}
	if err := setScalar(v, n.Value); err != nil {
		return nodeError(n, key, err.Error())
	}
	return nil
}

func nodeError(n *yaml.Node, key, problem string) *Error {
	return &Error{Line: n.Line, Key: key, Problem: problem}
}

// structFields maps each yaml key of t to its field index.
func structFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" && name != "-" {
			fields[name] = i
		}
	}
	return fields
}

func unknownKeyProblem(name string, fields map[string]int) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
	best, bestDistance := "", 3 // suggest only close misspellings
	for _, k := range known {
		if d := editDistance(name, k); d < bestDistance {
			best, bestDistance = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown key (did you mean %s?)", best)
	}
	return "unknown key (known here: " + strings.Join(known, ", ") + ")"
}

// editDistance is the Levenshtein distance, for "did you mean" hints.
func editDistance(a, b string) int {
	previous := make([]int, len(b)+1)
	current := make([]int, len(b)+1)
	for j := range previous {
		previous[j] = j
	}
	for i := 1; i <= len(a); i++ {
		current[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			current[j] = min(previous[j]+1, current[j-1]+1, previous[j-1]+cost)
		}
		previous, current = current, previous
	}
	return previous[len(b)]
}

// resolveSecrets replaces *_env indirections by the variables' values.
func resolveSecrets(cfg *Config, vars map[string]string) error {
	for i := range cfg.Keys {
		k := &cfg.Keys[i]
		if k.SecretEnv == "" {
			continue
		}
		value, err := lookupEnv(vars, fmt.Sprintf("keys[%d].secret_env", i), k.SecretEnv)
		if err != nil {
			return err
		}
		k.Secret = value
	}
	// Credentials that the chosen backend or lease store does not use are
	// left alone, so switching to the embedded ones needs no variables set.
	if cfg.Backend.Type == BackendS3 {
		if err := resolveCredentials(&cfg.Backend.Credentials, "backend.credentials", vars); err != nil {
			return err
		}
	}
	for i := range cfg.Backends {
		if err := resolveCredentials(&cfg.Backends[i].Credentials, fmt.Sprintf("backends[%d].credentials", i), vars); err != nil {
			return err
		}
	}
	switch cfg.Lease.Store {
	case LeaseStoreDynamoDB:
		return resolveCredentials(&cfg.Lease.DynamoDB.Credentials, "lease.dynamodb.credentials", vars)
	case LeaseStoreEtcd:
		return resolveEtcdPassword(&cfg.Lease.Etcd, vars)
	}
	return nil
}

func resolveCredentials(c *Credentials, key string, vars map[string]string) error {
	if c.Source != CredentialsEnv {
		return nil
	}
	if err := validateCredentials(*c, key); err != nil {
		return err // names a missing *_env key before any variable is looked up
	}
	for _, ref := range []struct {
		name   string
		target *string
		field  string
	}{
		{c.AccessKeyIDEnv, &c.AccessKeyID, "access_key_id_env"},
		{c.SecretAccessKeyEnv, &c.SecretAccessKey, "secret_access_key_env"},
	} {
		value, err := lookupEnv(vars, joinKey(key, ref.field), ref.name)
		if err != nil {
			return err
		}
		*ref.target = value
	}
	return nil
}

func lookupEnv(vars map[string]string, key, name string) (string, error) {
	value, ok := vars[name]
	if !ok {
		return "", keyError(key, "environment variable %s is not set", name)
	}
	if value == "" {
		return "", keyError(key, "environment variable %s is empty", name)
	}
	return value, nil
}

// environment turns os.Environ()-shaped entries into a map; later entries win,
// as they do for the process environment.
func environment(env []string) map[string]string {
	vars := make(map[string]string, len(env))
	for _, entry := range env {
		name, value, ok := strings.Cut(entry, "=")
		if ok && name != "" {
			vars[name] = value
		}
	}
	return vars
}

func definesKeys(vars map[string]string) bool {
	for name := range vars {
		if strings.HasPrefix(name, EnvPrefix+"_KEYS_") {
			return true
		}
	}
	return false
}
