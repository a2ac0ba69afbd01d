package server

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/metalog/metalog/internal/intparse"
	"github.com/metalog/metalog/internal/spell"
)

// configKeys returns the config file's keys (Config's yaml tags) with the
// type of each, and the keys sorted.
func configKeys() (map[string]reflect.Type, []string) {
	t := reflect.TypeFor[Config]()
	types := make(map[string]reflect.Type, t.NumField())
	names := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		types[key] = f.Type
		names = append(names, key)
	}
	slices.Sort(names)
	return types, names
}

// checkConfigDocument checks the top-level keys of a parsed config file
// before it is decoded, for errors that say more than the decoder's: an
// unknown key with its line and the closest known key, an integer that
// does not fit its key with "out of range". What it does not check is
// left to the decoder.
func checkConfigDocument(doc *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	types, names := configKeys()
	var errs []error
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		t, ok := types[k.Value]
		if !ok {
			errs = append(errs, unknownConfigKey(k, names))
			continue
		}
		if err := checkConfigInteger(k.Value, t, v); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func unknownConfigKey(k *yaml.Node, names []string) error {
	if near := spell.Closest(strings.ToLower(k.Value), names); near != "" {
		return fmt.Errorf("line %d: unknown key %s; did you mean %s?", k.Line, k.Value, near)
	}
	return fmt.Errorf("line %d: unknown key %s (README.md, Configuration, lists the keys)", k.Line, k.Value)
}

// checkConfigInteger checks a number given to an integer key: it must be
// an integer (YAML would truncate 1.5) within the range of the key's type.
func checkConfigInteger(key string, t reflect.Type, v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") {
		return nil
	}
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = intparse.Int(v.Value, 0, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = intparse.Uint(v.Value, 0, t.Bits())
	}
	if err != nil {
		return fmt.Errorf("line %d: %s %q: %w", v.Line, key, v.Value, err)
	}
	return nil
}
