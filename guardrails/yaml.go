package guardrails

import (
	"errors"
	"strconv"
	"strings"

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
// a comma-separated string. An unknown key matches ErrUnknownSetting, a
// duplicate key or a bad value ErrInvalidSetting; the result is validated.
// Every error starts with the line of the setting ("line 3: ").
func (s *Settings) UnmarshalYAML(node *yaml.Node) error {
	out := Defaults()
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		*s = out
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return atLine(invalid("", "guardrails must be a mapping of setting names to values, not a %s", kindName(node)), node.Line)
	}
	lines := make(map[string]int, len(node.Content)/2) // of the settings given
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		d, ok := lookup(k.Value)
		if !ok || k.Kind != yaml.ScalarNode {
			return atLine(unknownSetting(k.Value), k.Line)
		}
		if first, ok := lines[d.name]; ok {
			return atLine(invalid(d.name, "given twice (first on line %d)", first), k.Line)
		}
		lines[d.name] = k.Line
		text, err := yamlText(d, v)
		if err != nil {
			return atLine(err, v.Line)
		}
		if err := d.parse(&out, text); err != nil {
			return atLine(err, v.Line)
		}
	}
	if err := out.Validate(); err != nil {
		var e *settingError
		if errors.As(err, &e) {
			e.line = lines[e.name]
		}
		return err
	}
	*s = out
	return nil
}

// atLine sets the line of a setting error.
func atLine(err error, line int) error {
	var e *settingError
	if errors.As(err, &e) {
		e.line = line
	}
	return err
}

// yamlText returns the text form of the YAML value v of setting d.
func yamlText(d *setting, v *yaml.Node) (string, error) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null" && d.kind == kindSet:
		return "", nil
	case v.Kind == yaml.ScalarNode:
		return v.Value, nil
	case v.Kind == yaml.SequenceNode && d.kind == kindSet:
		names := make([]string, len(v.Content))
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return "", invalid(d.name, "want table property names, not a %s", kindName(e))
			}
			names[i] = e.Value
		}
		return strings.Join(names, ","), nil
	}
	return "", invalid(d.name, "want a single value, not a %s", kindName(v))
}

// kindName names the kind of a YAML node for an error.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}
