package config

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docKey writes a key path the way docs/configuration.md does: list entries
// as [N] and their variables with <N>.
func docKey(key string) (path, env string) {
	path = strings.ReplaceAll(key, "[0]", "[N]")
	env = strings.ReplaceAll(EnvName(key), "_0_", "_<N>_")
	return path, env
}

func TestEveryKeyIsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, leaf := range leafKeys(reflect.TypeOf(Config{}), "") {
		path, env := docKey(leaf.key)
		if !strings.Contains(doc, "`"+path+"`") {
			t.Errorf("docs/configuration.md does not document `%s`", path)
		}
		if !strings.Contains(doc, "`"+env+"`") {
			t.Errorf("docs/configuration.md does not name the variable `%s`", env)
		}
	}
}

func TestEveryKeyAppearsInTheExampleConfig(t *testing.T) {
	data, err := os.ReadFile("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	collectKeys(&root, "", present)
	for _, leaf := range leafKeys(reflect.TypeOf(Config{}), "") {
		if !present[leaf.key] {
			t.Errorf("config.yaml does not show %s", leaf.key)
		}
	}
}

// collectKeys records every key path in a YAML tree; list entries as [0].
func collectKeys(n *yaml.Node, prefix string, present map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			collectKeys(c, prefix, present)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := joinKey(prefix, n.Content[i].Value)
			present[key] = true
			collectKeys(n.Content[i+1], key, present)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			collectKeys(c, prefix+"[0]", present)
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
