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

// Load returns the desired schema a CQL text describes: its statements
// (CREATE, ALTER, DROP and USE, separated by ';') parsed with cql.Parse
// and applied in order with schema.Apply to the empty schema, after the
// admission rules of a new request (schema.Admit), so that what Diff plans
// from it is accepted by a server. Statements name their keyspace or
// follow a USE. A table whose CREATE TABLE names no id gets an unassigned
// one (UnassignedID). The error is a *LoadError naming the statement, its
// line and why. The rules that depend on the change (schema.AdmitChange)
// are left to the server, since Load also reads the DESCRIBE of an epoch
// of the history, which may hold what those rules now refuse.
func Load(text string) (schema.Schema, error) {
	stmts, err := cql.Parse(text)
	if err != nil {
		le := &LoadError{Err: err}
		var se *cql.SyntaxError
		if errors.As(err, &se) {
			le.Line, le.Column = se.Line, se.Column
		}
		return schema.Schema{}, le
	}
	var s schema.Schema
	for i, p := range stmts {
		fail := func(err error) (schema.Schema, error) {
			return schema.Schema{}, &LoadError{Statement: i + 1, Line: p.Line, Column: p.Column, Err: err}
		}
		if err := schema.Admit(p.Statement); err != nil {
			return fail(err)
		}
		ns, _, _, err := schema.Apply(s, p.Statement, schema.Env{Epoch: loadEpoch, Seq: uint32(i), Rules: schema.CurrentRules})
		if err != nil {
			return fail(err)
		}
		s = ns
	}
	return s, nil
}
