package plan

import (
	"errors"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// loadEpoch is the epoch Load applies the desired schema's statements at.
// No real change has epoch 0 (a cluster's first change is epoch 1), so the
// table ids Load derives for tables whose statement names none,
// schema.TableID(0, n), are never those of a real table; UnassignedID
// recognises them.
const loadEpoch = 0

// unassignedPrefix is the bytes every schema.TableID(loadEpoch, n) starts
// with: all of the id but the statement number.
var unassignedPrefix = [12]byte(schema.TableID(loadEpoch, 0).Bytes())

// UnassignedID reports whether id is one Load derived for a table whose
// CREATE TABLE named no id (WITH ID). The planner matches such a table to
// the current one by name alone and leaves the id of a new one to the
// cluster.
func UnassignedID(id schema.UUID) bool { return [12]byte(id[:12]) == unassignedPrefix }

// Source is one text of a desired schema that LoadSources reads with
// others: a file of a directory of schema files, say.
type Source struct {
	// Name says where Text comes from ("schema/shop.cql"), for errors;
	// "" for a text of no name, as Load's.
	Name string
	// Text is CQL DDL, as Load takes it.
	Text string
}

// Load returns the desired schema a CQL text describes: its statements
// (CREATE, ALTER, DROP and USE, separated by ';') parsed with cql.Parse
// and applied in order with schema.Apply to the empty schema, after the
// admission rules of a new request (schema.Admit), so that what Diff plans
// from it is accepted by a server. Statements name their keyspace or
// follow a USE. A table whose CREATE TABLE names no id gets an unassigned
// one (UnassignedID). The error is a *LoadError naming the statement, its
// line and why; a CREATE of an object an earlier statement created names
// that statement too (LoadError.First). The rules that depend on the
// change (schema.AdmitChange) are left to the server, since Load also
// reads the DESCRIBE of an epoch of the history, which may hold what those
// rules now refuse.
func Load(text string) (schema.Schema, error) {
	return LoadSources([]Source{{Text: text}})
}

// LoadSources returns the desired schema that several texts describe
// together, as Load does for one: the statements of each, in the order
// given, applied to what those before built. Each text is parsed on its
// own, so a USE holds to the end of its text only. An error names the
// source, as does the place of an object defined twice (LoadError.First),
// whichever texts the two definitions are in.
func LoadSources(sources []Source) (schema.Schema, error) {
	var s schema.Schema
	defined := map[objectKey]Place{} // where each object was created last
	seq := 0
	for _, src := range sources {
		stmts, err := cql.Parse(src.Text)
		if err != nil {
			le := &LoadError{Source: src.Name, Err: err}
			var se *cql.SyntaxError
			if errors.As(err, &se) {
				le.Line, le.Column = se.Line, se.Column
			}
			return schema.Schema{}, le
		}
		for i, p := range stmts {
			at := Place{Source: src.Name, Statement: i + 1, Line: p.Line, Column: p.Column}
			err := schema.Admit(p.Statement)
			var ns schema.Schema
			var res schema.Result
			if err == nil {
				ns, _, res, err = schema.Apply(s, p.Statement, schema.Env{Epoch: loadEpoch, Seq: uint32(seq), Rules: schema.CurrentRules})
			}
			key, creates := createdObject(res)
			if err != nil {
				le := &LoadError{Source: at.Source, Statement: at.Statement, Line: at.Line, Column: at.Column, Err: err}
				if first, ok := defined[key]; ok && creates && errors.Is(err, schema.ErrAlreadyExists) {
					le.First = &first
				}
				return schema.Schema{}, le
			}
			if creates && res.Applied {
				defined[key] = at
			}
			s = ns
			seq++
		}
	}
	return s, nil
}

// objectKey names an object of a schema in its namespace: a keyspace,
// a table or view of a keyspace, a type, an index of a keyspace, a
// function or aggregate by signature, or a trigger of a table.
type objectKey struct {
	namespace, keyspace, table, name string
}

// createdObject returns the key of the object a CREATE statement with
// result res creates (or, refused, would have created), and false for a
// statement of another kind. Apply fills the result's names on a refusal
// too.
func createdObject(res schema.Result) (objectKey, bool) {
	k := objectKey{keyspace: res.Keyspace}
	switch res.Kind {
	case "CREATE KEYSPACE":
		k.namespace = "keyspace"
	case "CREATE TABLE", "CREATE MATERIALIZED VIEW":
		k.namespace, k.table = "table", res.Table
	case "CREATE TYPE":
		k.namespace, k.name = "type", res.Name
	case "CREATE INDEX":
		k.namespace, k.name = "index", res.Name
	case "CREATE FUNCTION", "CREATE AGGREGATE":
		k.namespace, k.name = "function", res.Name
	case "CREATE TRIGGER":
		k.namespace, k.table, k.name = "trigger", res.Table, res.Name
	default:
		return k, false
	}
	return k, true
}
