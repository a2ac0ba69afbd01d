package metadata

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/ddlgen"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// objectKey names one object of a schema for the fold: the keyspace
// record ("keyspace"), or a type, table or index.
type objectKey struct{ family, keyspace, name string }

// objectsOf is every object of s with its DESCRIBE CQL, and the table of
// each index.
func objectsOf(s schema.Schema) map[objectKey]string {
	out := map[objectKey]string{}
	for _, k := range s.Keyspaces() {
		out[objectKey{"keyspace", k.Name, ""}] = describe.KeyspaceOnly(k)
		for _, ut := range k.UserTypes() {
			out[objectKey{"type", k.Name, ut.Name}] = describe.UserType(ut)
		}
		for _, t := range k.Tables() {
			out[objectKey{"table", k.Name, t.Name}] = describe.Table(t)
		}
		for _, ix := range k.Indexes() {
			out[objectKey{"index", k.Name, ix.Name}] = describe.Index(ix)
		}
	}
	return out
}

// fold applies the after images of events to objects, as a consumer of
// the feed would: an empty after drops the object (a keyspace with
// everything in it, a table with its indexes).
func fold(objects map[objectKey]string, indexTable map[objectKey]string, e Event) {
	family := "keyspace"
	switch {
	case strings.HasSuffix(e.Kind, "TABLE"):
		family = "table"
	case strings.HasSuffix(e.Kind, "TYPE"):
		family = "type"
	case strings.HasSuffix(e.Kind, "INDEX"):
		family = "index"
	case e.Kind == KindSetGuardrailsEvent:
		return
	}
	key := objectKey{family, e.Keyspace, e.Name}
	if family == "table" {
		key.name = e.Table
	}
	after := e.After()
	if after != "" {
		objects[key] = after
		if family == "index" {
			indexTable[key] = e.Table
		}
		return
	}
	delete(objects, key)
	for k := range objects {
		if (family == "keyspace" && k.keyspace == e.Keyspace) ||
			(family == "table" && k.family == "index" && k.keyspace == e.Keyspace && indexTable[k] == e.Table) {
			delete(objects, k)
		}
	}
}

// TestHistoryRebuildsEverySchema: for random DDL histories (single
// statements, atomic groups, guardrail changes), folding the events'
// after images from epoch 0 rebuilds every object of the final schema,
// and the schema at any epoch, read back from the history (in memory and
// from the store after a restart), is the one the state machine had then.
func TestHistoryRebuildsEverySchema(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		sm, err := Open(Config{Dir: dir, FlushWindow: time.Hour, HistoryCache: rapid.IntRange(1, 8).Draw(rt, "cache")})
		if err != nil {
			rt.Fatal(err)
		}
		a := &applier{t: t, sm: sm}
		captured := []string{describe.Schema(sm.Current().Schema)} // by epoch
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := range steps {
			cmd := Command{Text: ddlgen.Statement(rt, fmt.Sprint("stmt", i)), Principal: "p", Time: int64(i + 1)}
			switch rapid.IntRange(0, 9).Draw(rt, fmt.Sprint("shape", i)) {
			case 0:
				cmd = setGuardrails(t, "tables_warn_threshold", fmt.Sprint(rapid.IntRange(1, 5000).Draw(rt, fmt.Sprint("g", i))))
			case 1, 2:
				cmd.Text += "; " + ddlgen.Statement(rt, fmt.Sprint("more", i))
				cmd.Atomic = true
			}
			before := sm.Current().Epoch
			a.apply(cmd)
			if e := sm.Current().Epoch; e != before {
				if e != before+1 {
					rt.Fatalf("one command made epochs %d to %d", before+1, e)
				}
				captured = append(captured, describe.Schema(sm.Current().Schema))
			}
		}
		end := sm.Current().Epoch
		check := func(sm *StateMachine, when string) {
			recs, err := sm.History(0, end, 0)
			if err != nil || uint64(len(recs)) != end {
				rt.Fatalf("%s: %d records of %d epochs, %v", when, len(recs), end, err)
			}
			objects, indexTable := map[objectKey]string{}, map[objectKey]string{}
			for _, r := range recs {
				for _, e := range r.Events {
					fold(objects, indexTable, e)
				}
			}
			if diff := cmp.Diff(objectsOf(sm.Current().Schema), objects); diff != "" {
				rt.Fatalf("%s: folded after images differ from the final schema (-final +folded):\n%s", when, diff)
			}
			for range 5 {
				at := rapid.Uint64Range(0, end).Draw(rt, "at")
				s, err := sm.SchemaAt(sm.Current(), at)
				if err != nil {
					rt.Fatalf("%s: schema at %d: %v", when, at, err)
				}
				if got := describe.Schema(s); got != captured[at] {
					rt.Fatalf("%s: schema at %d:\n%s\nwant:\n%s", when, at, got, captured[at])
				}
			}
		}
		check(sm, "live")
		if err := sm.Close(); err != nil {
			rt.Fatal(err)
		}
		sm = openSM(t, dir)
		defer sm.Close()
		check(sm, "after a restart")
	})
}
