package guardrails

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// MarshalYAML returns s as a YAML mapping of every setting name to its
// value, sorted by name: integers for thresholds, booleans for flags,
// sequences of property names for property sets. It is the form of the
// `guardrails:` section of the configuration file.
func (s Settings) MarshalYAML() (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := range settings {
		d := &settings[i]
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: d.name}
		var v *yaml.Node
		switch d.kind {
		case kindThreshold:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(*d.threshold(&s), 10)}
		case kindFlag:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(*d.flag(&s))}
		default:
			v = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, n := range d.set(&s).Names() {
				v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: n})
			}
		}
		m.Content = append(m.Content, key, v)
	}
	return m, nil
}

// UnmarshalYAML sets *s from a YAML mapping of setting names to values.
// Settings the mapping leaves out take their default (not their previous
// value), so a config file lists only what it changes; a document without
// a `guardrails:` section never calls this method, so initialise the field
// with Defaults before decoding. Property sets are a sequence of names or
// a comma-separated string. An unknown key wraps ErrUnknownSetting, a
// duplicate key or a bad value ErrInvalidSetting; the result is validated.
func (s *Settings) UnmarshalYAML(node *yaml.Node) error {
	out := Defaults()
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		*s = out
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: line %d: guardrails must be a mapping of setting names to values", ErrInvalidSetting, node.Line)
	}
	seen := make(map[string]bool, len(node.Content)/2)
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		d, ok := lookup(k.Value)
		if !ok || k.Kind != yaml.ScalarNode {
			return fmt.Errorf("%w %q (line %d)", ErrUnknownSetting, k.Value, k.Line)
		}
		if seen[d.name] {
			return invalid(d.name, "given twice (line %d)", k.Line)
		}
		seen[d.name] = true
		text, err := yamlText(d, v)
		if err != nil {
			return err
		}
		if err := d.parse(&out, text); err != nil {
			return fmt.Errorf("%w (line %d)", err, v.Line)
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*s = out
	return nil
}

// yamlText returns the text form of the YAML value of setting d.
func yamlText(d *setting, v *yaml.Node) (string, error) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null" && d.kind == kindSet:
		return "", nil
	case v.Kind == yaml.ScalarNode:
		return v.Value, nil
	case v.Kind == yaml.SequenceNode && d.kind == kindSet:
		text := ""
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return "", invalid(d.name, "line %d: expected a table property name", e.Line)
			}
			if i > 0 {
				text += ","
			}
			text += e.Value
		}
		return text, nil
	}
	return "", invalid(d.name, "line %d: expected a scalar value", v.Line)
}
