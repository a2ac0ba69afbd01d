package integration

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"google.golang.org/grpc/codes"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// What a nemesis run is checked against, once every fault is healed and
// the clients stopped. Each check is a pure function of what the run
// recorded and what the members hold, so TestNemesisCheckerCatches... can
// feed it made-up evidence.

// memberEnd is what one member holds at the end of a run.
type memberEnd struct {
	name   string
	epoch  uint64
	digest string
	// events maps each request id in the member's history to the epochs
	// of its events, oldest first.
	events map[string][]uint64
	tables map[string]bool // "ks.t0", "u.c1_5"
}

// clusterEnd is what the members hold and say at the end of a run.
type clusterEnd struct {
	names   []string // every member's name, by index
	running []bool   // whether its process runs
	// exits holds, for a member whose process does not run, the end of
	// its stderr.
	exits   []string
	members []memberEnd                        // of the running members that answered
	lists   map[string]*pb.ListMembersResponse // ListMembers, by the name of the member asked
	check   *pb.CheckClusterResponse           // CheckCluster asked of a running member
	// checkCLI is what `metalog cluster check` printed when it exited
	// non-zero, with the exit code; empty when it exited 0.
	checkCLI string
	errs     []string // what could not be gathered, and why
}

// gatherEnd reads what every running member holds once they agree (or
// after a minute), and what they say of the membership once every voter
// answers (or after a minute).
func gatherEnd(t *testing.T, c *cluster, tg *targets) *clusterEnd {
	t.Helper()
	e := &clusterEnd{names: c.names, lists: map[string]*pb.ListMembersResponse{}}
	for _, s := range c.servers {
		e.running = append(e.running, s.running())
		exit := ""
		if !s.running() {
			exit = tail(s, 8)
		}
		e.exits = append(e.exits, exit)
	}
	err := pollUntil(60*time.Second, func() error {
		e.members = e.members[:0]
		for i := range tg.conns {
			if !e.running[i] {
				continue
			}
			me, err := readMemberEnd(c.names[i], tg.member(i))
			if err != nil {
				return err
			}
			e.members = append(e.members, me)
		}
		return agreement(e.members)
	})
	if err != nil {
		e.errs = append(e.errs, fmt.Sprintf("the members do not hold the same schema and history a minute after the faults healed: %v", err))
	}
	err = pollUntil(60*time.Second, func() error {
		clear(e.lists)
		e.check = nil
		for i := range tg.conns {
			if !e.running[i] {
				continue
			}
			m := tg.member(i)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			l, err := m.ListMembers(ctx, &pb.ListMembersRequest{})
			if err == nil && e.check == nil {
				e.check, err = m.CheckCluster(ctx, &pb.CheckClusterRequest{})
			}
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", c.names[i], err)
			}
			e.lists[c.names[i]] = l
		}
		if p := e.memberProblems(); len(p) > 0 {
			return fmt.Errorf("%d problems, the first: %s", len(p), p[0])
		}
		return nil
	})
	if err != nil && (len(e.lists) == 0 || e.check == nil) {
		e.errs = append(e.errs, fmt.Sprintf("the members' lists and check could not be read: %v", err))
	}
	var eps []string
	for i, s := range c.servers {
		if e.running[i] {
			eps = append(eps, s.grpcAddr)
		}
	}
	if out, stderr, code := runBinary(t, "cluster", "check", "--endpoints", strings.Join(eps, ",")); code != 0 {
		e.checkCLI = fmt.Sprintf("exit %d:\n%s%s", code, out, stderr)
	}
	return e
}

// readMemberEnd reads a member's schema and its whole history up to the
// schema's epoch.
func readMemberEnd(name string, m pb.MetadataServiceClient) (memberEnd, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	me := memberEnd{name: name, events: map[string][]uint64{}, tables: map[string]bool{}}
	s, err := m.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		return me, fmt.Errorf("%s: schema: %w", name, err)
	}
	me.epoch, me.digest = s.Epoch, s.Digest
	for _, ks := range s.Keyspaces {
		for _, tb := range ks.Tables {
			me.tables[ks.Name+"."+tb.Name] = true
		}
	}
	from := uint64(0)
	for {
		to := me.epoch
		h, err := m.History(ctx, &pb.HistoryRequest{FromEpoch: &from, ToEpoch: &to, Limit: 10000})
		if err != nil {
			return me, fmt.Errorf("%s: history after epoch %d: %w", name, from, err)
		}
		if h.OldestEpoch > 1 {
			return me, fmt.Errorf("%s: its history starts at epoch %d, not at the first", name, h.OldestEpoch)
		}
		for _, ev := range h.Events {
			me.events[ev.RequestId] = append(me.events[ev.RequestId], ev.Epoch)
		}
		if h.NextEpoch == nil {
			return me, nil
		}
		from = *h.NextEpoch
	}
}

// agreement is nil when every member is at the same epoch with the same
// digest.
func agreement(ms []memberEnd) error {
	for _, m := range ms[min(1, len(ms)):] {
		if m.epoch != ms[0].epoch || m.digest != ms[0].digest {
			return fmt.Errorf("%s at epoch %d digest %.12s, %s at epoch %d digest %.12s", ms[0].name, ms[0].epoch, ms[0].digest, m.name, m.epoch, m.digest)
		}
	}
	return nil
}

// describeOp renders an operation as evidence: its request id and
// statement, the member asked, the answer and when.
func (e *clusterEnd) describeOp(r *opRecord) string {
	answer := fmt.Sprintf("acknowledged at epoch %d (applied=%v)", r.epoch, r.out.applied)
	if r.failed {
		answer = fmt.Sprintf("answered %s %q", r.code, clip(r.msg))
		if r.reason != "" {
			answer += " (reason " + r.reason + ")"
		}
	}
	return fmt.Sprintf("request %s %q sent to %s at %s: %s at %s", r.requestID, r.statement(), e.names[r.member], fmtNanos(r.call), answer, fmtNanos(r.ret))
}

// clip shortens an error message for a problem line.
func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

// holders lists where a request id is in the members' histories:
// "n1 at epoch 40, n2 at epoch 40".
func (e *clusterEnd) holders(id string) string {
	var at []string
	for _, m := range e.members {
		if eps, ok := m.events[id]; ok {
			at = append(at, fmt.Sprintf("%s at epoch %v", m.name, strings.Trim(fmt.Sprint(eps), "[]")))
		}
	}
	return strings.Join(at, ", ")
}

// writeProblems checks the writes against what the members hold:
// acknowledged changes on every member at the epoch their answer gave,
// acknowledged no-ops and refused changes on none, no change applied
// twice or at two epochs, OUTCOME_UNKNOWN answers naming their request,
// and no answer no correct member gives.
func (e *clusterEnd) writeProblems(ops []*opRecord) []string {
	var p []string
	for _, r := range ops {
		if r.wrong != "" {
			p = append(p, fmt.Sprintf("misreport: %s: %s", e.describeOp(r), r.wrong))
		}
		if r.kind == opRead {
			continue
		}
		if r.reason == outcomeUnknownReason && r.reasonID != r.requestID {
			p = append(p, fmt.Sprintf("misreport: %s: its %s answer names request_id %q", e.describeOp(r), outcomeUnknownReason, r.reasonID))
		}
		switch {
		case r.class == writeRefused:
			p = append(p, e.refusedProblems(r)...)
		case r.class == writeAcked && (r.out.applied || r.kind == opUnique):
			p = append(p, e.ackedProblems(r)...)
		case r.class == writeAcked:
			if at := e.holders(r.requestID); at != "" {
				p = append(p, fmt.Sprintf("misreport: a change answered as a no-op (applied=false) is in the history: %s; held by %s", e.describeOp(r), at))
			}
		}
	}
	return append(p, e.splitProblems()...)
}

// refusedProblems checks a write answered as refused: nothing of it is on
// any member.
func (e *clusterEnd) refusedProblems(r *opRecord) []string {
	var evidence []string
	if at := e.holders(r.requestID); at != "" {
		evidence = append(evidence, "it is in the history of "+at)
	}
	if r.kind == opUnique {
		var with []string
		for _, m := range e.members {
			if m.tables["u."+r.uniqueTable()] {
				with = append(with, m.name)
			}
		}
		if len(with) > 0 {
			evidence = append(evidence, fmt.Sprintf("table u.%s exists on %s", r.uniqueTable(), strings.Join(with, ", ")))
		}
	}
	if len(evidence) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("promise broken (refused means never applied): %s; yet it applied: %s", e.describeOp(r), strings.Join(evidence, "; "))}
}

// ackedProblems checks a write acknowledged as a change: every member
// holds it, at the epoch the answer gave.
func (e *clusterEnd) ackedProblems(r *opRecord) []string {
	var p []string
	for _, m := range e.members {
		eps, ok := m.events[r.requestID]
		switch {
		case !ok:
			p = append(p, fmt.Sprintf("promise broken (an acknowledged change is on every member): %s; missing from %s's history (epoch %d)", e.describeOp(r), m.name, m.epoch))
		case eps[0] != r.epoch:
			p = append(p, fmt.Sprintf("misreport: %s; %s holds it at epoch %d", e.describeOp(r), m.name, eps[0]))
		}
		if r.kind == opUnique && !m.tables["u."+r.uniqueTable()] {
			p = append(p, fmt.Sprintf("promise broken (an acknowledged change is on every member): %s; %s (epoch %d) has no table u.%s", e.describeOp(r), m.name, m.epoch, r.uniqueTable()))
		}
	}
	return p
}

// splitProblems finds changes applied twice (every request of the
// clients is one statement: one event) or at different epochs on
// different members.
func (e *clusterEnd) splitProblems() []string {
	var p []string
	first := map[string]string{} // request id -> the first member's name
	for _, m := range e.members {
		for _, id := range slices.Sorted(maps.Keys(m.events)) {
			eps := m.events[id]
			if len(eps) > 1 && strings.HasPrefix(id, "nem-") {
				p = append(p, fmt.Sprintf("promise broken (a request applies once): request %s has %d changes on %s, at epochs %v", id, len(eps), m.name, eps))
			}
			if prev, ok := first[id]; !ok {
				first[id] = m.name
			} else if other := e.member(prev); other.events[id][0] != eps[0] {
				p = append(p, fmt.Sprintf("split: request %s is at epoch %d on %s but at epoch %d on %s", id, other.events[id][0], prev, eps[0], m.name))
			}
		}
	}
	return p
}

// member returns the end of the member named name.
func (e *clusterEnd) member(name string) memberEnd {
	i := slices.IndexFunc(e.members, func(m memberEnd) bool { return m.name == name })
	return e.members[i]
}

// memberProblems checks the membership: every member any running member
// lists is a process that runs and answers (no dead voter, no dead
// learner), every running process is a voter in every list, and the
// agreement check (CheckCluster, and `metalog cluster check` once the
// others hold) agrees on every member.
func (e *clusterEnd) memberProblems() []string {
	var p []string
	shown := map[string]bool{} // the names whose exit is shown already
	for _, asker := range slices.Sorted(maps.Keys(e.lists)) {
		listed := map[string]int{}
		for _, m := range e.lists[asker].Members {
			listed[m.Name]++
			i := slices.Index(e.names, m.Name)
			switch {
			case i < 0 || !e.running[i]:
				why := "no process of that name runs"
				if i >= 0 {
					why = "its process exited (above)"
					if !shown[m.Name] {
						why, shown[m.Name] = "its process exited:\n"+e.exits[i], true
					}
				}
				p = append(p, fmt.Sprintf("promise broken (no dead %s): %s (id %s) is a %s in %s's member list, unreachable (%s), and %s", m.Role, m.Name, m.Id, m.Role, asker, m.Error, why))
			case !m.Reachable || m.Error != "":
				p = append(p, fmt.Sprintf("promise broken (no dead %s): %s (id %s) is a %s in %s's member list that does not answer: %s", m.Role, m.Name, m.Id, m.Role, asker, m.Error))
			case m.Role != "voter":
				p = append(p, fmt.Sprintf("stranded: %s (id %s) runs and answers but is still a %s in %s's member list", m.Name, m.Id, m.Role, asker))
			}
		}
		for i, name := range e.names {
			switch {
			case listed[name] > 1:
				p = append(p, fmt.Sprintf("split: %s's member list has %d members named %s", asker, listed[name], name))
			case e.running[i] && listed[name] == 0:
				p = append(p, fmt.Sprintf("stranded: %s runs but is not in %s's member list", name, asker))
			}
		}
	}
	if e.check != nil {
		for _, m := range e.check.Members {
			if m.State != "agrees" {
				p = append(p, fmt.Sprintf("cluster check (reference %s): %s (id %s) %s at epoch %d: %s", e.check.Reference, m.Name, m.Id, m.State, m.Epoch, m.Detail))
			}
		}
		if !e.check.Agreement {
			p = append(p, fmt.Sprintf("cluster check (reference %s): agreement: NO", e.check.Reference))
		}
	}
	if e.checkCLI != "" {
		p = append(p, "metalog cluster check does not agree: "+e.checkCLI)
	}
	return p
}

// nemesisHistory turns the operations into porcupine's: answered reads,
// acknowledged creates and drops of ks.tN, and the others as the members'
// histories tell: one in some history changed something, so it applied
// (when, nobody knows: it returns at math.MaxInt64); one in none either
// never applied or changed nothing, so it is left out. Refused writes are
// treated so too: one that applied breaks a promise writeProblems
// reports with its evidence, and porcupine then checks the rest as it
// happened. The writes of tables of the clients' own are not in the
// model. The porcupine client id changes after every operation that
// returns at math.MaxInt64, so that no id has two open at once.
func nemesisHistory(ops []*opRecord, inHistory func(requestID string) bool) []porcupine.Operation {
	var hist []porcupine.Operation
	ids := map[int]int{} // worker -> porcupine client id
	next := nemesisClients
	for _, r := range ops {
		in := schemaInput{kind: r.kind, table: r.table, cutOff: r.cutOff}
		out, ret := r.out, r.ret
		switch {
		case r.kind == opUnique, r.kind == opRead && r.failed:
			continue
		case r.kind != opRead && r.class != writeAcked:
			if !inHistory(r.requestID) {
				continue
			}
			out, ret = schemaOutput{applied: true}, math.MaxInt64
		}
		id, ok := ids[r.worker]
		if !ok {
			id = r.worker
		}
		hist = append(hist, porcupine.Operation{ClientId: id, Input: in, Call: r.call, Output: out, Return: ret})
		if ret == math.MaxInt64 {
			id, next = next, next+1
		}
		ids[r.worker] = id
	}
	return hist
}

// byTable splits a history into one per table: the creates and drops of
// ks.tN, and every read seeing only whether ks.tN exists. Linearizability
// is local: the history is linearizable per table if it is as a whole,
// and porcupine's search stays small per table. (A read that saw two
// tables at different moments would pass per table; the members answer
// a read from one immutable view.)
func byTable(hist []porcupine.Operation) [][]porcupine.Operation {
	parts := make([][]porcupine.Operation, schemaTables)
	for _, op := range hist {
		in := op.Input.(schemaInput)
		if in.kind != opRead {
			parts[in.table] = append(parts[in.table], op)
			continue
		}
		for n := range parts {
			one := op
			one.Output = schemaOutput{tables: op.Output.(schemaOutput).tables & (1 << n)}
			parts[n] = append(parts[n], one)
		}
	}
	return parts
}

// linearizabilityProblems checks the history with porcupine, one table
// at a time, and describes each table whose history is not linearizable
// (illegal) and each one porcupine could not decide on within timeout.
func linearizabilityProblems(hist []porcupine.Operation, timeout time.Duration) (illegal, undecided []string) {
	for n, part := range byTable(hist) {
		res, info := porcupine.CheckOperationsVerbose(schemaModel, part, timeout)
		switch res {
		case porcupine.Unknown:
			undecided = append(undecided, fmt.Sprintf("porcupine did not decide on table t%d's %d operations within %v: neither proof nor violation", n, len(part), timeout))
		case porcupine.Illegal:
			illegal = append(illegal, describeIllegal(n, part, info))
		}
	}
	return illegal, undecided
}

// describeIllegal renders a history porcupine found illegal: the end of
// its longest linearizable prefix and the operations called around the
// first one it could not place.
func describeIllegal(table int, part []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, lin := range partition {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "promise broken (linearizable): table t%d's history of %d operations is not linearizable; the longest linearizable prefix has %d operations, ending:\n", table, len(part), len(longest))
	state := schemaModel.Init()
	for i, op := range longest {
		_, state = schemaModel.Step(state, op.Input, op.Output)
		if i >= len(longest)-15 {
			fmt.Fprintf(&b, "  [%s, %s] %s => %s\n", fmtNanos(op.Call), fmtNanos(op.Return), describeSchemaOp(op.Input, op.Output), describeTables(state.(uint8)))
		}
	}
	sorted := slices.Clone(part)
	slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	placed := map[[2]int64]bool{}
	for _, op := range longest {
		placed[[2]int64{int64(op.ClientId), op.Call}] = true
	}
	stuck := slices.IndexFunc(sorted, func(op porcupine.Operation) bool { return !placed[[2]int64{int64(op.ClientId), op.Call}] })
	b.WriteString("operations by call time around the first one it could not place (*):\n")
	for i := max(0, stuck-10); i < min(len(sorted), stuck+10) && stuck >= 0; i++ {
		mark := " "
		if i == stuck {
			mark = "*"
		}
		op := sorted[i]
		fmt.Fprintf(&b, " %s client %2d [%s, %s] %s\n", mark, op.ClientId, fmtNanos(op.Call), fmtNanos(op.Return), describeSchemaOp(op.Input, op.Output))
	}
	return b.String()
}

// answeredWhileCutOff returns the reads sent to a cut-off member that it
// answered before the partition healed. A correct member answers none: it
// cannot confirm a read with a quorum before the fault file heals it, and
// the heal time is taken before the file is written.
func answeredWhileCutOff(ops []*opRecord, heals []int64) []*opRecord {
	var early []*opRecord
	for _, r := range ops {
		if !r.cutOff || r.failed {
			continue
		}
		// The partition the read was sent in is the first one healed after
		// the read was called.
		if i := slices.IndexFunc(heals, func(heal int64) bool { return heal > r.call }); i >= 0 && r.ret < heals[i] {
			early = append(early, r)
		}
	}
	return early
}

// nemesisCounts summarizes a run's operations for the log.
func nemesisCounts(ops []*opRecord) string {
	var reads, readsFailed, cutOff, acked, refused, unknown, outcomeUnknown int
	codes := map[codes.Code]int{}
	for _, r := range ops {
		if r.failed {
			codes[r.code]++
		}
		switch {
		case r.kind == opRead && r.failed:
			readsFailed++
		case r.kind == opRead:
			reads++
			if r.cutOff {
				cutOff++
			}
		case r.class == writeAcked:
			acked++
		case r.class == writeRefused:
			refused++
		default:
			unknown++
			if r.reason == outcomeUnknownReason {
				outcomeUnknown++
			}
		}
	}
	return fmt.Sprintf("%d operations: %d writes acknowledged, %d refused, %d unknown (%d answered %s); %d reads answered (%d of them sent to a member a partition cut off), %d failed; error codes %v",
		len(ops), acked, refused, unknown, outcomeUnknown, outcomeUnknownReason, reads, cutOff, readsFailed, codes)
}

// maxProblemsShown bounds the problems of one kind reported in full.
const maxProblemsShown = 15

// check runs every check on the run and fails the test with each problem
// found.
func (r *nemesisRun) check(t *testing.T) {
	t.Helper()
	t.Logf("seed %d; faults %v; %s", r.seed, r.done, nemesisCounts(r.ops))
	if r.broken != nil {
		t.Errorf("the schedule ended early: %v", r.broken)
	}
	held := map[string]bool{}
	for _, m := range r.end.members {
		for id := range m.events {
			held[id] = true
		}
	}
	hist := nemesisHistory(r.ops, func(id string) bool { return held[id] })
	start := time.Now()
	illegal, undecided := linearizabilityProblems(hist, 60*time.Second)
	lin := append(illegal, undecided...)
	t.Logf("porcupine: %d of %d tables illegal, %d undecided, on %d operations, in %v", len(illegal), schemaTables, len(undecided), len(hist), time.Since(start).Round(time.Millisecond))
	var early []string
	for _, op := range answeredWhileCutOff(r.ops, r.heals) {
		early = append(early, fmt.Sprintf("promise broken (linearizable reads): %s answered a linearizable read (%s) at %s, sent at %s while a partition cut it off, before the partition healed: a quorum cannot have confirmed it",
			r.end.names[op.member], describeTables(op.out.tables), fmtNanos(op.ret), fmtNanos(op.call)))
	}
	for _, group := range [][]string{r.end.errs, r.end.writeProblems(r.ops), r.end.memberProblems(), early, lin} {
		for i, p := range group {
			if i == maxProblemsShown {
				t.Errorf("... and %d more like these", len(group)-i)
				break
			}
			t.Error(p)
		}
	}
}
