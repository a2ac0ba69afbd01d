package guardrails

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// KeyspaceOverrides is the `keyspace_guardrails:` section of the
// configuration file: the initial per-keyspace overrides of a new cluster,
// a mapping of scopes to mappings of setting names to values:
//
//	keyspace_guardrails:
//	  shop: {tables_fail_threshold: 50}
//	  "tenant_*": {tables_fail_threshold: 10, columns_per_table_fail_threshold: 100}
//
// It is a comparable value (so that a configuration struct holding it
// stays comparable); the zero value holds none.
type KeyspaceOverrides struct {
	enc string // AppendOverrides of them; "" for none
}

// NewKeyspaceOverrides returns the set of the given overrides (the last
// one of a scope wins; empty ones are left out).
func NewKeyspaceOverrides(list ...Override) KeyspaceOverrides {
	var ov Overrides
	for _, o := range list {
		ov = ov.With(o)
	}
	if ov.Len() == 0 {
		return KeyspaceOverrides{}
	}
	return KeyspaceOverrides{enc: string(AppendOverrides(nil, ov))}
}

// List returns the overrides sorted by scope, in a new slice.
func (k KeyspaceOverrides) List() []Override {
	if k.enc == "" {
		return nil
	}
	ov, err := DecodeOverrides([]byte(k.enc))
	if err != nil {
		panic("guardrails: KeyspaceOverrides holds a bad encoding: " + err.Error())
	}
	return ov.All()
}

// Len returns the number of overrides.
func (k KeyspaceOverrides) Len() int { return len(k.List()) }

// UnmarshalYAML sets *k from a YAML mapping of scopes to settings. A bad
// scope, a setting an override cannot hold, a bad value and a duplicate
// scope or setting are errors starting with their line ("line 3: ").
func (k *KeyspaceOverrides) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		*k = KeyspaceOverrides{}
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return atLine(invalid("", "keyspace_guardrails must be a mapping of keyspace scopes (shop, tenant_*) to settings, not a %s", kindName(node)), node.Line)
	}
	var out []Override
	seen := map[string]int{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		sk, sv := node.Content[i], node.Content[i+1]
		scope, err := ParseScope(sk.Value)
		if err != nil {
			return atLine(err, sk.Line)
		}
		if first, dup := seen[scope]; dup {
			return atLine(invalid("", "keyspace_guardrails: scope %s given twice (first on line %d)", scope, first), sk.Line)
		}
		seen[scope] = sk.Line
		if sv.Kind != yaml.MappingNode || len(sv.Content) == 0 {
			return atLine(invalid("", "keyspace_guardrails: %s must be a non-empty mapping of setting names to values", scope), sv.Line)
		}
		o := Override{Scope: scope}
		names := map[string]bool{}
		for j := 0; j+1 < len(sv.Content); j += 2 {
			nk, nv := sv.Content[j], sv.Content[j+1]
			if names[nk.Value] {
				return atLine(invalid(nk.Value, "given twice for keyspace %s", scope), nk.Line)
			}
			names[nk.Value] = true
			if nv.Kind != yaml.ScalarNode {
				return atLine(invalid(nk.Value, "want a single value, not a %s", kindName(nv)), nv.Line)
			}
			if o, err = o.Set(nk.Value, nv.Value); err != nil {
				return atLine(err, nk.Line)
			}
		}
		if err := o.Validate(); err != nil {
			return atLine(err, sk.Line)
		}
		out = append(out, o)
	}
	*k = NewKeyspaceOverrides(out...)
	return nil
}

// MarshalYAML returns k in the form UnmarshalYAML reads.
func (k KeyspaceOverrides) MarshalYAML() (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, o := range k.List() {
		v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
		for _, s := range o.Values() {
			v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Name},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(s.Value, 10)})
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: o.Scope}, v)
	}
	return m, nil
}
