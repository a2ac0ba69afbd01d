package integration

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// schemaTables is how many tables (ks.t0, ks.t1, ...) the linearizability
// test creates and drops; the model's state is a bitmask of them, so it must
// stay at most 8.
const schemaTables = 4

// schemaOpKind is what one operation of the linearizability test does.
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
	// schemaClient.pick); the model ignores it.
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

// schemaHistory collects the operations of concurrent clients. Times are
// nanoseconds since start on the monotonic clock.
type schemaHistory struct {
	start time.Time

	mu      sync.Mutex // guards ops, writes, unknown, dropped and codes
	ops     []porcupine.Operation
	writes  int                // writes recorded with a known outcome
	unknown int                // writes recorded with an unknown outcome
	dropped int                // failed reads, left out of the history
	codes   map[codes.Code]int // gRPC codes of failed operations
}

func newSchemaHistory() *schemaHistory {
	return &schemaHistory{start: time.Now(), codes: map[codes.Code]int{}}
}

// now is the time since start in nanoseconds; time.Since uses the
// monotonic clock reading, so wall clock steps do not reorder operations.
func (h *schemaHistory) now() int64 { return int64(time.Since(h.start)) }

// add records a completed operation.
func (h *schemaHistory) add(op porcupine.Operation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
	switch {
	case op.Output.(schemaOutput).unknown:
		h.unknown++
	case op.Input.(schemaInput).kind != opRead:
		h.writes++
	}
}

// failed counts a failed operation's gRPC code; a failed read is also
// counted as dropped.
func (h *schemaHistory) failed(err error, read bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.codes[status.Code(err)]++
	if read {
		h.dropped++
	}
}

// counts is the number of operations and of writes with a known outcome
// recorded so far.
func (h *schemaHistory) counts() (ops, writes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops), h.writes
}

// schemaClient is one client goroutine of the linearizability test.
type schemaClient struct {
	t       *testing.T
	h       *schemaHistory
	members []pb.MetadataServiceClient
	// nextID hands out porcupine client ids: a client whose write ended
	// unknown goes on under a fresh id, as a restarted process would, so
	// that no id has two operations open at once.
	nextID *atomic.Int64
	rng    *rand.Rand
	name   string // prefix of request ids
	// cut is the index of the member a partition cuts off, plus one; 0
	// while none is (see pick).
	cut *atomic.Int32
	// stop ends the run before its next operation.
	stop *atomic.Bool
}

// opTimeout bounds each operation of the linearizability test.
const opTimeout = 3 * time.Second

// run does at most ops operations, starting none after deadline or once
// stop is set, on the members pick chooses. The calls wait for a
// connection to be ready, so a client that picks the killed member waits
// for its restart (or the timeout) rather than failing at once over and
// over.
func (c *schemaClient) run(ctx context.Context, id, ops int, deadline time.Time) {
	for i := 0; i < ops && time.Now().Before(deadline) && !c.stop.Load() && ctx.Err() == nil; i++ {
		in := schemaInput{kind: schemaOpKind(c.rng.IntN(3)), table: c.rng.IntN(schemaTables)}
		// The call time is taken before pick, so that a read picked for a
		// cut-off member is called before the partition heals.
		call := c.h.now()
		m, toCut := c.pick(id+i, in)
		member := c.members[m]
		in.cutOff = toCut && in.kind == opRead
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		out, err := c.do(octx, member, in, fmt.Sprintf("%s-%d", c.name, i))
		ret := c.h.now()
		cancel()
		if err != nil {
			c.h.failed(err, in.kind == opRead)
			switch status.Code(err) {
			case codes.InvalidArgument, codes.AlreadyExists, codes.NotFound:
				c.t.Errorf("%s: a definite refusal means the test is wrong: %v", describeSchemaOp(in, out), err)
			}
			if in.kind == opRead {
				continue
			}
			out, ret = schemaOutput{unknown: true}, math.MaxInt64
		}
		c.h.add(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
		if out.unknown {
			id = int(c.nextID.Add(1) - 1)
		}
	}
}

// pick returns the index of the member for operation in, the turn-th of
// its client, and whether a partition cuts that member off: each member in
// turn, except while a partition cuts one off. Then writes go to the other
// side, where they can commit, and half the reads go to the cut-off
// member, which cannot know of them: a correct member fails those reads
// (unless the partition heals first), and one that answers from its own
// state answers stale.
func (c *schemaClient) pick(turn int, in schemaInput) (member int, toCut bool) {
	n := len(c.members)
	m := turn % n
	cut := int(c.cut.Load()) - 1
	switch {
	case cut < 0:
	case in.kind == opRead && c.rng.IntN(2) == 0:
		m = cut
	case m == cut:
		m = (cut + 1 + c.rng.IntN(n-1)) % n
	}
	return m, m == cut
}

// do runs one operation against member.
func (c *schemaClient) do(ctx context.Context, member pb.MetadataServiceClient, in schemaInput, requestID string) (schemaOutput, error) {
	if in.kind == opRead {
		r, err := member.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks", Consistency: "linearizable"}, grpc.WaitForReady(true))
		if err != nil {
			return schemaOutput{}, err
		}
		var out schemaOutput
		for _, tb := range r.Keyspace.GetTables() {
			n := tableIndex(tb.Name)
			if n < 0 {
				c.t.Errorf("read at epoch %d: unexpected table ks.%s", r.Epoch, tb.Name)
				continue
			}
			out.tables |= 1 << n
		}
		return out, nil
	}
	stmt := fmt.Sprintf("CREATE TABLE IF NOT EXISTS ks.t%d (id int PRIMARY KEY)", in.table)
	if in.kind == opDrop {
		stmt = fmt.Sprintf("DROP TABLE IF EXISTS ks.t%d", in.table)
	}
	r, err := member.Execute(ctx, &pb.ExecuteRequest{Statements: stmt, RequestId: requestID}, grpc.WaitForReady(true))
	if err != nil {
		return schemaOutput{}, err
	}
	if len(r.Results) != 1 {
		c.t.Errorf("%s: %d results, want 1: %v", stmt, len(r.Results), r)
		return schemaOutput{unknown: true}, nil
	}
	return schemaOutput{applied: r.Results[0].Applied}, nil
}

// TestLinearizableSchemaHistory runs 8 clients that create and drop a few
// tables with IF [NOT] EXISTS and read the keyspace linearizably through
// every member, under the nemesis of runSchemaHistory (the leader cut off
// from both followers, one follower cut off alone, the leader killed with
// SIGKILL and restarted), and checks with porcupine that the whole history
// is linearizable: every applied flag and every read agrees with one order
// of the operations that respects real time.
func TestLinearizableSchemaHistory(t *testing.T) {
	run := runSchemaHistory(t, faultsTags)
	if early := run.answeredWhileCutOff(); len(early) > 0 {
		t.Errorf("%d linearizable reads were answered by a member before the partition that cut it off healed, the first (%s) at %s: such a read cannot have been confirmed by a quorum",
			len(early), describeSchemaOp(early[0].Input, early[0].Output), fmtNanos(early[0].Return))
	}
	ops, unknown := run.ops, run.unknown
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(schemaModel, ops, 30*time.Second)
	t.Logf("porcupine: %s on %d operations (%d unknown) in %v", res, len(ops), unknown, time.Since(start).Round(time.Millisecond))
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Fatalf("porcupine did not decide within 30s on %d operations (%d unknown): neither proof nor violation; make the history smaller", len(ops), unknown)
	default:
		reportIllegal(t, ops, info)
	}
}

// reportIllegal fails the test with the history in call order, the longest
// partial linearization porcupine found, and a visualization written to a
// temporary file that outlives the test.
func reportIllegal(t *testing.T, ops []porcupine.Operation, info porcupine.LinearizationInfo) {
	t.Helper()
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	for _, op := range sorted {
		fmt.Fprintf(&b, "  client %2d [%s, %s] %s\n", op.ClientId, fmtNanos(op.Call), fmtNanos(op.Return), describeSchemaOp(op.Input, op.Output))
	}
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, lin := range partition {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	var l strings.Builder
	state := schemaModel.Init()
	for _, op := range longest {
		_, state = schemaModel.Step(state, op.Input, op.Output)
		fmt.Fprintf(&l, "  [%s, %s] %s => %s\n", fmtNanos(op.Call), fmtNanos(op.Return), describeSchemaOp(op.Input, op.Output), describeTables(state.(uint8)))
	}
	where := "not written"
	if f, err := os.CreateTemp("", "metalog-linearizability-*.html"); err == nil {
		if err := porcupine.Visualize(schemaModel, info, f); err == nil {
			where = f.Name()
		}
		f.Close()
	}
	t.Fatalf("history of %d operations is not linearizable (visualization: %s)\nlongest linearizable prefix (%d operations):\n%shistory by call time:\n%s",
		len(ops), where, len(longest), l.String(), b.String())
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
// model that accepts everything would make TestLinearizableSchemaHistory
// pass whatever metalog does.
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
