package schema_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/internal/ddlgen"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
	"pgregory.net/rapid"
)

// state is what Undo must restore exactly: everything observable of a
// schema, the bookkeeping included.
type state struct {
	digest        [32]byte
	describe      string
	tables        int
	size, objects int64
	internal      string
}

// stateOf takes s's state.
func stateOf(s schema.Schema) state {
	return state{
		digest:   s.Digest(),
		describe: describe.Schema(s),
		tables:   s.TableCount(),
		size:     s.EncodedSize(),
		objects:  s.ObjectCount(),
		internal: schema.InternalState(s),
	}
}

// diffStates returns what differs between got and want, "" when nothing.
func diffStates(got, want state) string {
	return cmp.Diff(want, got, cmp.AllowUnexported(state{}))
}

// step is one applied statement of a history: the state before it, its
// changes and, per change, the prior as captured and as encoded.
type step struct {
	text    string
	before  state
	changes []schema.Change
	priors  []any
	encoded [][]byte
}

// history applies n statements drawn by ddlgen to the empty schema and
// returns the final schema and a step per statement that changed
// something. It counts the ops seen and the statements refused or no-ops.
func history(t *rapid.T, stats *undoStats) (schema.Schema, []step) {
	var s schema.Schema
	var steps []step
	n := rapid.IntRange(30, 150).Draw(t, "statements")
	for i := range n {
		text := ddlgen.Statement(t, "stmt")
		parsed, err := cql.Parse(text)
		if err != nil || len(parsed) != 1 {
			t.Fatalf("ddlgen drew %q, which does not parse as one statement: %v", text, err)
		}
		ns, diff, _, err := schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: uint64(i + 1)})
		if err != nil || diff.Empty() {
			stats.unchanged++
			continue
		}
		st := step{text: text, before: stateOf(s), changes: diff.Changes}
		for _, c := range diff.Changes {
			p := schema.Prior(s, c)
			if p != nil && reflect.ValueOf(p).IsNil() {
				t.Fatalf("%s: Prior of %s returned a typed nil %T", text, c.Op, p)
			}
			st.priors = append(st.priors, p)
			st.encoded = append(st.encoded, encodePrior(t, c, p))
			stats.ops[c.Op]++
		}
		steps = append(steps, st)
		s = ns
	}
	return s, steps
}

// encodePrior encodes p, the prior of c, as a change history stores it.
func encodePrior(t *rapid.T, c schema.Change, p any) []byte {
	b := schema.AppendPrior(nil, c.Op, p)
	if p != nil && len(b) == 0 {
		t.Fatalf("Prior of %s returned a %T, which AppendPrior does not encode", c.Op, p)
	}
	return b
}

// undoAll undoes the steps newest-first from s, the schema after the last
// of them, taking each change's prior from prior, and checks after each
// step that the schema is the one before it.
func undoAll(t *rapid.T, how string, s schema.Schema, steps []step, prior func(st *step, j int) any) {
	for i := len(steps) - 1; i >= 0; i-- {
		st := &steps[i]
		for j := len(st.changes) - 1; j >= 0; j-- {
			var err error
			if s, err = schema.Undo(s, st.changes[j], prior(st, j)); err != nil {
				t.Fatalf("%s: undoing change %d (%s) of step %d %q: %v", how, j, st.changes[j].Op, i, st.text, err)
			}
		}
		if d := diffStates(stateOf(s), st.before); d != "" {
			t.Fatalf("%s: after undoing step %d %q the schema differs from the one before it (-want +got):\n%s", how, i, st.text, d)
		}
		if schema.ComputeDigest(s) != s.Digest() || schema.ComputeEncodedSize(s) != s.EncodedSize() {
			t.Fatalf("%s: after undoing step %d %q the maintained digest or size disagrees with a recomputation", how, i, st.text)
		}
	}
	if s.KeyspaceCount() != 0 || s.ObjectCount() != 0 {
		t.Fatalf("%s: undoing every step left %d keyspaces, %d objects", how, s.KeyspaceCount(), s.ObjectCount())
	}
}

// undoStats counts, over all checks, the change ops undone and the
// statements that changed nothing, so the test can show that the drawn
// histories exercise every op and also refusals.
type undoStats struct {
	ops       map[schema.ChangeOp]int
	unchanged int
	checks    int
}

// TestUndoRebuildsEveryEarlierSchema applies random DDL histories (ddlgen)
// and undoes them newest-first twice, once with the priors as Prior
// returned them and once with the priors round-tripped through their
// encodings; after each statement's undo the schema must equal, in digest,
// DESCRIBE output, table count, encoded size, object count and internal
// bookkeeping, the one before that statement.
func TestUndoRebuildsEveryEarlierSchema(t *testing.T) {
	stats := &undoStats{ops: map[schema.ChangeOp]int{}}
	rapid.Check(t, func(t *rapid.T) {
		stats.checks++
		s, steps := history(t, stats)
		undoAll(t, "captured priors", s, steps, func(st *step, j int) any { return st.priors[j] })
		undoAll(t, "decoded priors", s, steps, func(st *step, j int) any {
			p, err := schema.DecodePrior(st.changes[j].Op, st.encoded[j])
			if err != nil {
				t.Fatalf("decoding the prior of change %d (%s) of %q: %v", j, st.changes[j].Op, st.text, err)
			}
			return p
		})
	})
	t.Logf("%d checks; changes undone by op: %v; statements refused or no-ops: %d", stats.checks, stats.ops, stats.unchanged)
	for op := schema.OpPutKeyspace; op <= schema.OpDropIndex; op++ {
		if stats.ops[op] == 0 {
			t.Errorf("no history had a %s change", op)
		}
	}
	if stats.unchanged == 0 {
		t.Errorf("no statement was refused or a no-op")
	}
}

// TestDecodedKeyspacePriorIsWhole checks, on random histories, that every
// keyspace dropped decodes from AppendKeyspaceObjects to a keyspace with
// the same maintained digest, bookkeeping, DESCRIBE text and encoding.
func TestDecodedKeyspacePriorIsWhole(t *testing.T) {
	stats := &undoStats{ops: map[schema.ChangeOp]int{}}
	rapid.Check(t, func(t *rapid.T) {
		_, steps := history(t, stats)
		for _, st := range steps {
			for j, c := range st.changes {
				if c.Op != schema.OpDropKeyspace {
					continue
				}
				orig := st.priors[j].(*schema.Keyspace)
				got, err := schema.DecodeKeyspaceObjects(st.encoded[j])
				if err != nil {
					t.Fatalf("%q: %v", st.text, err)
				}
				checkSameKeyspace(t, got, orig)
			}
		}
	})
	if stats.ops[schema.OpDropKeyspace] == 0 {
		t.Errorf("no history dropped a keyspace")
	}
}
