package topo

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/grid-ina/grid/harness/internal/repo"
)

// topologiesDir is the repository's topologies/ folder.
func topologiesDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(repo.RootOrFail(t), "topologies")
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(topologiesDir(t), "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	return schema
}

// schemaAt follows a slash-separated path of keys into the schema.
func schemaAt(t *testing.T, schema map[string]any, path string) map[string]any {
	t.Helper()
	cur := schema
	for _, key := range strings.Split(path, "/") {
		next, ok := cur[key].(map[string]any)
		if !ok {
			t.Fatalf("schema has no object at %s (stuck at %q)", path, key)
		}
		cur = next
	}
	return cur
}

func propertyNames(t *testing.T, schema map[string]any, path string) []string {
	var names []string
	for name := range schemaAt(t, schema, path) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

func TestSchemaListsExactlyTheFieldsTheDecoderAccepts(t *testing.T) {
	schema := loadSchema(t)
	for _, c := range []struct {
		path   string
		fields []string
	}{
		{"properties", topologyFields},
		{"$defs/node/properties", nodeFields},
		{"$defs/link/properties", linkFields},
	} {
		if got, want := propertyNames(t, schema, c.path), sorted(c.fields); !slices.Equal(got, want) {
			t.Errorf("schema %s = %v, decoder accepts %v", c.path, got, want)
		}
	}
}

func TestSchemaPatternsAndRangesMatchTheGoRules(t *testing.T) {
	schema := loadSchema(t)
	str := func(path, key string) string { return fmt.Sprint(schemaAt(t, schema, path)[key]) }
	checks := []struct{ path, key, want string }{
		{"$defs/bandwidth", "pattern", BandwidthPattern},
		{"$defs/link/properties/loss", "pattern", LossPattern},
		{"$defs/node/properties/name", "pattern", NamePattern},
		{"$defs/link/properties/mtu", "minimum", fmt.Sprint(MinMTU)},
		{"$defs/link/properties/mtu", "maximum", fmt.Sprint(MaxMTU)},
		{"$defs/node/properties/id", "maximum", fmt.Sprint(MaxSwitchID)},
		{"$defs/node/properties/tier", "enum", fmt.Sprint([]any{string(TierEdge), string(TierAgg), string(TierCore), string(TierLeaf), string(TierSpine)})},
		{"$defs/node/properties/role", "enum", fmt.Sprint([]any{string(RoleWorker), string(RolePS)})},
		{"$defs/node/properties/kind", "enum", fmt.Sprint([]any{string(KindHost), string(KindSwitch)})},
	}
	for _, c := range checks {
		if got := str(c.path, c.key); got != c.want {
			t.Errorf("schema %s %s = %s, Go has %s", c.path, c.key, got, c.want)
		}
	}
}

// schemaValidator checks a decoded YAML document against the subset of JSON
// Schema 2020-12 that schema.json uses.
type schemaValidator struct{ root map[string]any }

func (v schemaValidator) validate(s map[string]any, x any, path string) error {
	if ref, ok := s["$ref"].(string); ok {
		target := v.root
		for _, key := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			target = target[key].(map[string]any)
		}
		if err := v.validate(target, x, path); err != nil {
			return err
		}
	}
	if typ, ok := s["type"].(string); ok && !hasType(x, typ) {
		return fmt.Errorf("%s: %v is not of type %s", path, x, typ)
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(x) {
		return fmt.Errorf("%s: %v is not %v", path, x, c)
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(x) }) {
		return fmt.Errorf("%s: %v not in %v", path, x, enum)
	}
	if p, ok := s["pattern"].(string); ok {
		if str, isStr := x.(string); isStr && !compiledPattern(p).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", path, str, p)
		}
	}
	if num, isNum := number(x); isNum {
		if lo, ok := s["minimum"].(float64); ok && num < lo {
			return fmt.Errorf("%s: %v below %v", path, num, lo)
		}
		if hi, ok := s["maximum"].(float64); ok && num > hi {
			return fmt.Errorf("%s: %v above %v", path, num, hi)
		}
	}
	if str, ok := x.(string); ok {
		if lo, ok := s["minLength"].(float64); ok && float64(len(str)) < lo {
			return fmt.Errorf("%s: %q shorter than %v", path, str, lo)
		}
	}
	if obj, ok := x.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range anySlice(s["required"]) {
			if _, present := obj[r.(string)]; !present {
				return fmt.Errorf("%s: missing %s", path, r)
			}
		}
		for key, val := range obj {
			ps, known := props[key].(map[string]any)
			if !known {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: unknown property %s", path, key)
				}
				continue
			}
			if err := v.validate(ps, val, path+"."+key); err != nil {
				return err
			}
		}
	}
	if arr, ok := x.([]any); ok {
		if lo, ok := s["minItems"].(float64); ok && float64(len(arr)) < lo {
			return fmt.Errorf("%s: fewer than %v items", path, lo)
		}
		if hi, ok := s["maxItems"].(float64); ok && float64(len(arr)) > hi {
			return fmt.Errorf("%s: more than %v items", path, hi)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range arr {
				if err := v.validate(items, item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	for _, sub := range anySlice(s["allOf"]) {
		if err := v.validate(sub.(map[string]any), x, path); err != nil {
			return err
		}
	}
	if anyOf := anySlice(s["anyOf"]); anyOf != nil && !slices.ContainsFunc(anyOf, func(sub any) bool { return v.validate(sub.(map[string]any), x, path) == nil }) {
		return fmt.Errorf("%s: matches none of anyOf", path)
	}
	if not, ok := s["not"].(map[string]any); ok && v.validate(not, x, path) == nil {
		return fmt.Errorf("%s: matches a forbidden form", path)
	}
	if cond, ok := s["if"].(map[string]any); ok && v.validate(cond, x, path) == nil {
		if then, ok := s["then"].(map[string]any); ok {
			if err := v.validate(then, x, path); err != nil {
				return err
			}
		}
	}
	return nil
}

var patterns = map[string]*regexp.Regexp{}

// compiledPattern caches the schema's patterns: the shipped files hold thousands of values.
func compiledPattern(p string) *regexp.Regexp {
	re, ok := patterns[p]
	if !ok {
		re = regexp.MustCompile(p)
		patterns[p] = re
	}
	return re
}

func anySlice(x any) []any {
	s, _ := x.([]any)
	return s
}

func number(x any) (float64, bool) {
	switch n := x.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func hasType(x any, typ string) bool {
	switch typ {
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "integer":
		n, ok := number(x)
		return ok && n == math.Trunc(n)
	case "number":
		_, ok := number(x)
		return ok
	}
	return false
}

func schemaCheck(t *testing.T, schema map[string]any, data []byte) error {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	return schemaValidator{schema}.validate(schema, doc, "$")
}

func TestShippedTopologiesSatisfySchemaAndDecoder(t *testing.T) {
	schema := loadSchema(t)
	files, err := filepath.Glob(filepath.Join(topologiesDir(t), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < len(shipped) {
		t.Fatalf("topologies/ holds %d YAML files, want at least the %d shipped ones", len(files), len(shipped))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemaCheck(t, schema, data); err != nil {
			t.Errorf("%s violates schema.json: %v", f, err)
		}
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSchemaRejectsWhatTheDecoderRejects feeds the schema the bad inputs whose
// fault lies in the shape of the file (not in cross references), and the good
// file, so the schema neither drifts looser nor stricter than the decoder.
func TestSchemaRejectsWhatTheDecoderRejects(t *testing.T) {
	schema := loadSchema(t)
	if err := schemaCheck(t, schema, withLine(1, "name: small")); err != nil {
		t.Fatalf("schema rejects the valid example: %v", err)
	}
	bad := map[string][]byte{
		"unknown link field":        withLine(10, `  - {endpoints: ["s1:p2", "s2:p2"], bandwith: 10Gbps}`),
		"unknown node field":        withLine(4, "  - {name: s2, kind: switch, programable: true}"),
		"unknown top-level field":   withLine(1, "nmae: small"),
		"bandwidth without a unit":  withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 10}`),
		"bandwidth unit G":          withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 9G}`),
		"delay without a unit":      withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], delay: 2}`),
		"loss without percent":      withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], loss: 0.5}`),
		"endpoint without port":     withLine(8, `  - {endpoints: ["s1", "h1:eth0"]}`),
		"three endpoints":           withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0", "s2:p4"]}`),
		"capacity on plain switch":  withLine(4, "  - {name: s2, kind: switch, capacity: 1Gbps}"),
		"programmable, no capacity": withLine(4, "  - {name: s2, kind: switch, programmable: true}"),
		"ingress on a worker":       withLine(5, "  - {name: h1, kind: host, role: worker, ingress: 1Gbps}"),
		"role on a switch":          withLine(4, "  - {name: s2, kind: switch, role: ps}"),
		"tier on a host":            withLine(5, "  - {name: h1, kind: host, tier: edge}"),
		"unknown role":              withLine(5, "  - {name: h1, kind: host, role: boss}"),
		"MTU out of range":          withLine(10, `  - {endpoints: ["s1:p2", "s2:p2"], mtu: 100000}`),
		"host id out of range":      withLine(5, "  - {name: h1, kind: host, id: 20000}"),
		"missing kind":              withLine(4, "  - {name: s2}"),
	}
	for name, data := range bad {
		if schemaCheck(t, schema, data) == nil {
			t.Errorf("%s: schema accepts it", name)
		}
		if _, err := Parse(data, "bad.yaml"); err == nil {
			t.Errorf("%s: decoder accepts it", name)
		}
	}
}
