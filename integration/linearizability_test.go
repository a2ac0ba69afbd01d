package integration

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// schemaTables is how many tables (ks.t0, ks.t1, ...) the nemesis's
// clients create and drop; the model's state is a bitmask of them, so it must
// stay at most 8.
const schemaTables = 4

// schemaOpKind is what one operation of the nemesis's clients does.
type schemaOpKind uint8

const (
	opCreate schemaOpKind = iota // CREATE TABLE IF NOT EXISTS ks.tN
	opDrop                       // DROP TABLE IF EXISTS ks.tN
	opRead                       // GetKeyspace ks with consistency "linearizable"
)

// schemaInput is the input of an operation in the history.
type schemaInput struct {
	kind  schemaOpKind
	table int // which tN a create or drop names; unused by reads
	// cutOff marks a read sent to a member a partition had cut off (see
	// targets.pick); the model ignores it.
	cutOff bool
}

// schemaOutput is the output of an operation in the history.
type schemaOutput struct {
	// unknown marks a write that returned an error: it may or may not have
	// taken effect. Its operation returns at math.MaxInt64.
	unknown bool
	// applied is a known write's StatementResult.applied: false when
	// IF [NOT] EXISTS made it a no-op.
	applied bool
	// tables is a read's answer: bit N set when ks.tN exists.
	tables uint8
}

// schemaModel is the sequential specification of a keyspace whose tables
// are created with IF NOT EXISTS, dropped with IF EXISTS and read whole.
// The state is a uint8 bitmask of the tables that exist.
//
// Step is deterministic even for writes of unknown outcome: after
// CREATE TABLE IF NOT EXISTS the table exists and after DROP TABLE IF EXISTS
// it does not, whatever the state before, so only the applied flag depends
// on the state before and an unknown write accepts either. A write that
// never took effect is covered too: porcupine may linearize an operation
// that returns at math.MaxInt64 after every other one, where nothing
// observes it.
var schemaModel = porcupine.Model{
	Init:              func() any { return uint8(0) },
	Step:              schemaStep,
	Hash:              func(state any) uint64 { return uint64(state.(uint8)) },
	DescribeOperation: describeSchemaOp,
	DescribeState:     func(state any) string { return describeTables(state.(uint8)) },
}

// schemaStep is schemaModel's Step.
func schemaStep(state, input, output any) (bool, any) {
	s, in, out := state.(uint8), input.(schemaInput), output.(schemaOutput)
	bit := uint8(1) << in.table
	switch in.kind {
	case opCreate:
		return out.unknown || out.applied == (s&bit == 0), s | bit
	case opDrop:
		return out.unknown || out.applied == (s&bit != 0), s &^ bit
	case opRead:
		return out.tables == s, s
	}
	panic(fmt.Sprintf("schema model: operation kind %d", in.kind))
}

// tableIndex returns N for the table name tN the test uses, or -1.
func tableIndex(name string) int {
	for n := range schemaTables {
		if name == fmt.Sprintf("t%d", n) {
			return n
		}
	}
	return -1
}

// describeTables renders a bitmask of tables as {t0 t2}.
func describeTables(mask uint8) string {
	var names []string
	for n := range schemaTables {
		if mask&(1<<n) != 0 {
			names = append(names, fmt.Sprintf("t%d", n))
		}
	}
	return "{" + strings.Join(names, " ") + "}"
}

// describeSchemaOp renders an operation for logs and porcupine's
// visualization.
func describeSchemaOp(input, output any) string {
	in, out := input.(schemaInput), output.(schemaOutput)
	switch {
	case in.cutOff:
		return "read from a cut-off member -> " + describeTables(out.tables)
	case in.kind == opRead:
		return "read -> " + describeTables(out.tables)
	}
	verb := "create"
	if in.kind == opDrop {
		verb = "drop"
	}
	switch {
	case out.unknown:
		return fmt.Sprintf("%s t%d -> unknown", verb, in.table)
	case out.applied:
		return fmt.Sprintf("%s t%d -> applied", verb, in.table)
	}
	return fmt.Sprintf("%s t%d -> no-op", verb, in.table)
}

// fmtNanos renders an operation time, "∞" for an unknown write's return.
func fmtNanos(ns int64) string {
	if ns == math.MaxInt64 {
		return "∞"
	}
	return time.Duration(ns).Round(time.Microsecond).String()
}

// TestLinearizabilityCheckerCatchesAStaleRead checks the model and checker
// on hand-built histories: legal ones must pass, and a stale read, a wrong
// applied flag and a lost write must each be found illegal. Without it a
// model that accepts everything would make TestNemesis pass whatever
// metalog does.
func TestLinearizabilityCheckerCatchesAStaleRead(t *testing.T) {
	create := func(n int) schemaInput { return schemaInput{kind: opCreate, table: n} }
	drop := func(n int) schemaInput { return schemaInput{kind: opDrop, table: n} }
	read := schemaInput{kind: opRead}
	applied := schemaOutput{applied: true}
	noop := schemaOutput{}
	unknown := schemaOutput{unknown: true}
	sees := func(mask uint8) schemaOutput { return schemaOutput{tables: mask} }
	op := func(client int, call, ret int64, in schemaInput, out schemaOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	const never = math.MaxInt64

	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"stale read after an acknowledged create", []porcupine.Operation{
			op(0, 0, 10, create(0), applied),
			op(1, 20, 30, read, sees(0)),
		}, porcupine.Illegal},
		{"read concurrent with a create may see either state", []porcupine.Operation{
			op(0, 0, 10, create(0), applied),
			op(1, 5, 15, read, sees(0)),
			op(2, 6, 16, read, sees(0b1)),
			op(1, 20, 30, read, sees(0b1)),
		}, porcupine.Ok},
		{"read goes back in time", []porcupine.Operation{
			op(0, 0, 100, create(0), applied),
			op(1, 10, 20, read, sees(0b1)),
			op(2, 30, 40, read, sees(0)),
		}, porcupine.Illegal},
		{"create, concurrent no-op create, drop", []porcupine.Operation{
			op(0, 0, 10, create(1), applied),
			op(1, 5, 15, create(1), noop),
			op(2, 20, 30, drop(1), applied),
			op(0, 40, 50, drop(1), noop),
			op(1, 60, 70, read, sees(0)),
		}, porcupine.Ok},
		{"no-op create of a table nobody created", []porcupine.Operation{
			op(0, 0, 10, create(2), noop),
		}, porcupine.Illegal},
		{"two sequential creates both applied", []porcupine.Operation{
			op(0, 0, 10, create(0), applied),
			op(1, 20, 30, create(0), applied),
		}, porcupine.Illegal},
		{"applied drop of a table that is gone", []porcupine.Operation{
			op(0, 0, 10, create(3), applied),
			op(1, 20, 30, drop(3), applied),
			op(2, 40, 50, drop(3), applied),
		}, porcupine.Illegal},
		{"unknown create that never took effect", []porcupine.Operation{
			op(0, 0, never, create(1), unknown),
			op(1, 10, 20, read, sees(0)),
			op(1, 30, 40, read, sees(0)),
		}, porcupine.Ok},
		{"unknown create that took effect late", []porcupine.Operation{
			op(0, 0, never, create(1), unknown),
			op(1, 10, 20, read, sees(0)),
			op(1, 30, 40, read, sees(0b10)),
			op(2, 50, 60, drop(1), applied),
		}, porcupine.Ok},
		{"unknown create is still not undone", []porcupine.Operation{
			op(0, 0, never, create(1), unknown),
			op(1, 10, 20, read, sees(0b10)),
			op(1, 30, 40, read, sees(0)),
		}, porcupine.Illegal},
		{"unknown drop explains a no-op drop", []porcupine.Operation{
			op(0, 0, 10, create(0), applied),
			op(1, 20, never, drop(0), unknown),
			op(2, 30, 40, drop(0), noop),
			op(2, 50, 60, read, sees(0)),
		}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, info := porcupine.CheckOperationsVerbose(schemaModel, tc.ops, 10*time.Second)
			if res != tc.want {
				var lin []string
				for _, partition := range info.PartialLinearizationsOperations() {
					for _, l := range partition {
						var d []string
						for _, op := range l {
							d = append(d, describeSchemaOp(op.Input, op.Output))
						}
						lin = append(lin, strings.Join(d, "; "))
					}
				}
				t.Fatalf("porcupine says %s, want %s; partial linearizations: %q", res, tc.want, lin)
			}
		})
	}
}
