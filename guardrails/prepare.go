package guardrails

import (
	"sort"
	"strings"

	"github.com/metalog/metalog/schema"
)

// Prepare runs before schema.Apply. It removes the table properties of
// table_properties_ignored from a CREATE or ALTER TABLE or MATERIALIZED
// VIEW and returns a
// warning naming them, as Cassandra does. It never modifies st: when it
// removes something it returns a shallow copy with a new Options map
// (sharing the other fields with st), and otherwise st itself and no
// warnings. Other statements pass through unchanged.
//
// When the properties it removes were all an ALTER TABLE (or
// MATERIALIZED VIEW) ... WITH did,
// nothing is left to apply: Prepare then returns a nil statement with the
// warning, and the caller reports the warning and treats the statement as
// applied without change (Cassandra accepts it as a no-op), without calling
// schema.Apply (which refuses a nil statement).
func Prepare(s Settings, st schema.Statement) (schema.Statement, []Warning) {
	if s.TablePropertiesIgnored.Len() == 0 {
		return st, nil
	}
	switch st := st.(type) {
	case *schema.CreateTable:
		return stripCreate(s, st, st.Options, func(opts map[string]string) schema.Statement {
			c := *st
			c.Options = opts
			return &c
		})
	case *schema.CreateTableLike:
		return stripCreate(s, st, st.Options, func(opts map[string]string) schema.Statement {
			c := *st
			c.Options = opts
			return &c
		})
	case *schema.CreateView:
		return stripCreate(s, st, st.Options, func(opts map[string]string) schema.Statement {
			c := *st
			c.Options = opts
			return &c
		})
	case *schema.AlterView:
		opts, ignored := strip(s.TablePropertiesIgnored, st.Options)
		if ignored == nil {
			return st, nil
		}
		w := []Warning{ignoredWarning(s, ignored)}
		if len(opts) == 0 {
			return nil, w
		}
		c := *st
		c.Options = opts
		return &c, w
	case *schema.AlterTable:
		opts, ignored := strip(s.TablePropertiesIgnored, st.Options)
		if ignored == nil {
			return st, nil
		}
		w := []Warning{ignoredWarning(s, ignored)}
		if len(opts) == 0 && len(st.Add) == 0 && len(st.Drop) == 0 && len(st.Rename) == 0 && st.Mask == nil {
			return nil, w
		}
		c := *st
		c.Options = opts
		return &c, w
	}
	return st, nil
}

// strip returns opts without the properties in ignored (nil when none are
// left) and the sorted names it removed (nil when none, and then opts is
// returned as is).
func strip(ignored PropertySet, opts map[string]string) (map[string]string, []string) {
	var removed []string
	for k := range opts {
		if ignored.Contains(strings.ToLower(k)) {
			removed = append(removed, k)
		}
	}
	if removed == nil {
		return opts, nil
	}
	var out map[string]string
	if len(opts) > len(removed) {
		out = make(map[string]string, len(opts)-len(removed))
		for k, v := range opts {
			if !ignored.Contains(strings.ToLower(k)) {
				out[k] = v
			}
		}
	}
	for i := range removed {
		removed[i] = strings.ToLower(removed[i])
	}
	sort.Strings(removed)
	return out, removed
}

// ignoredWarning is the warning naming the table properties Prepare
// removed, in Cassandra's wording.
func ignoredWarning(s Settings, removed []string) Warning {
	const g = "table_properties_ignored"
	return Warning{Guardrail: g, Message: decorate(g, "Ignoring provided values ["+strings.Join(removed, ", ")+"] as they are not supported for Table Properties (ignored values are: ["+strings.Join(s.TablePropertiesIgnored.Names(), ", ")+"])")}
}

// stripCreate is Prepare for a statement creating a table with the
// properties opts: st itself when none is ignored, else the statement
// with returns for the properties left, and the warning.
func stripCreate(s Settings, st schema.Statement, opts map[string]string, with func(map[string]string) schema.Statement) (schema.Statement, []Warning) {
	left, ignored := strip(s.TablePropertiesIgnored, opts)
	if ignored == nil {
		return st, nil
	}
	return with(left), []Warning{ignoredWarning(s, ignored)}
}
