package integration

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// These tests feed the checks of TestNemesis made-up evidence. TestNemesis
// cannot pass while a promise is broken, so each check must be shown to
// find what it looks for, and to pass what keeps the promise: without
// them a check that finds nothing would make TestNemesis pass whatever
// metalog does.

// madeUpRun is a run of three members that kept every promise: a table
// of a client's own created (acknowledged), ks.t0 created (acknowledged)
// and created again (a no-op), a table of a client's own refused, one of
// unknown outcome that applied, a drop of unknown outcome that did not.
func madeUpRun() ([]*opRecord, *clusterEnd) {
	ops := []*opRecord{
		{worker: 0, kind: opUnique, table: 1, requestID: "nem-1-c0-1", member: 0, class: writeAcked, out: schemaOutput{applied: true}, epoch: 10},
		{worker: 1, kind: opCreate, table: 0, requestID: "nem-1-c1-1", member: 1, class: writeAcked, out: schemaOutput{applied: true}, epoch: 11},
		{worker: 2, kind: opCreate, table: 0, requestID: "nem-1-c2-1", member: 2, class: writeAcked, epoch: 11},
		{worker: 3, kind: opUnique, table: 1, requestID: "nem-1-c3-1", member: 0, class: writeRefused, failed: true, code: codes.Unavailable, msg: "raftlog: no leader"},
		{worker: 4, kind: opUnique, table: 1, requestID: "nem-1-c4-1", member: 1, class: writeUnknown, failed: true, code: codes.DeadlineExceeded,
			msg: "may still apply", reason: outcomeUnknownReason, reasonID: "nem-1-c4-1"},
		{worker: 5, kind: opDrop, table: 2, requestID: "nem-1-c5-1", member: 2, class: writeUnknown, failed: true, code: codes.DeadlineExceeded},
		{worker: 6, kind: opRead, member: 0, out: schemaOutput{tables: 1}},
	}
	e := &clusterEnd{names: []string{"n1", "n2", "n3"}, running: []bool{true, true, true}, exits: []string{"", "", ""},
		lists: map[string]*pb.ListMembersResponse{}, check: &pb.CheckClusterResponse{Agreement: true, Reference: "n1"}}
	for _, name := range e.names {
		e.members = append(e.members, memberEnd{name: name, epoch: 12, digest: "d12",
			events: map[string][]uint64{"nemesis-keyspaces": {1, 2}, "nem-1-c0-1": {10}, "nem-1-c1-1": {11}, "nem-1-c4-1": {12}},
			tables: map[string]bool{"u.c0_1": true, "ks.t0": true, "u.c4_1": true}})
		e.check.Members = append(e.check.Members, &pb.MemberCheck{Name: name, Id: "id-" + name, State: "agrees", Epoch: 12})
	}
	for _, asker := range e.names {
		l := &pb.ListMembersResponse{}
		for _, name := range e.names {
			l.Members = append(l.Members, &pb.Member{Name: name, Id: "id-" + name, Role: "voter", Reachable: true})
		}
		e.lists[asker] = l
	}
	return ops, e
}

// endOf returns the end of the member named name in e.
func endOf(e *clusterEnd, name string) *memberEnd {
	for i := range e.members {
		if e.members[i].name == name {
			return &e.members[i]
		}
	}
	panic(name)
}

// listedIn returns member name as asker lists it in e.
func listedIn(e *clusterEnd, asker, name string) *pb.Member {
	for _, m := range e.lists[asker].Members {
		if m.Name == name {
			return m
		}
	}
	panic(name)
}

// goneN3 makes n3's process gone while the others still list it, with
// role.
func goneN3(e *clusterEnd, role string) {
	e.running[2], e.exits[2] = false, `level=INFO msg="this member was removed from the cluster; it stops"`
	e.members = e.members[:2]
	for _, asker := range []string{"n1", "n2"} {
		m := listedIn(e, asker, "n3")
		m.Role, m.Reachable, m.Error = role, false, "connection refused"
	}
	delete(e.lists, "n3")
	e.check.Members[2].State, e.check.Members[2].Detail = "unreachable", "connection refused"
}

// plantedPromise is a broken promise planted in madeUpRun, and what the
// problem found must say.
type plantedPromise struct {
	name  string
	plant func(ops []*opRecord, e *clusterEnd)
	want  []string // substrings of one problem; nil: no problem at all
}

// brokenPromises are the broken promises the checks must find.
var brokenPromises = []plantedPromise{
	{"every promise kept", func([]*opRecord, *clusterEnd) {}, nil},
	{"a refused change in a member's history", func(_ []*opRecord, e *clusterEnd) {
		endOf(e, "n2").events["nem-1-c3-1"] = []uint64{13}
	}, []string{"refused means never applied", "nem-1-c3-1", "sent to n1", "Unavailable", "n2 at epoch 13"}},
	{"a refused change's table on a member", func(_ []*opRecord, e *clusterEnd) {
		endOf(e, "n1").tables["u.c3_1"] = true
	}, []string{"refused means never applied", "nem-1-c3-1", "table u.c3_1 exists on n1"}},
	{"an acknowledged change missing from a history", func(_ []*opRecord, e *clusterEnd) {
		delete(endOf(e, "n3").events, "nem-1-c1-1")
	}, []string{"acknowledged change is on every member", "nem-1-c1-1", "missing from n3's history"}},
	{"an acknowledged change's table missing", func(_ []*opRecord, e *clusterEnd) {
		delete(endOf(e, "n2").tables, "u.c0_1")
	}, []string{"acknowledged change is on every member", "nem-1-c0-1", "n2 (epoch 12) has no table u.c0_1"}},
	{"an acknowledged change at another epoch than answered", func(_ []*opRecord, e *clusterEnd) {
		endOf(e, "n1").events["nem-1-c0-1"] = []uint64{9}
	}, []string{"misreport", "acknowledged at epoch 10", "n1 holds it at epoch 9"}},
	{"a no-op in the history", func(_ []*opRecord, e *clusterEnd) {
		endOf(e, "n1").events["nem-1-c2-1"] = []uint64{12}
	}, []string{"answered as a no-op", "nem-1-c2-1", "n1 at epoch 12"}},
	{"a change at two epochs", func(_ []*opRecord, e *clusterEnd) {
		endOf(e, "n2").events["nem-1-c4-1"] = []uint64{14}
	}, []string{"split", "nem-1-c4-1 is at epoch 12 on n1 but at epoch 14 on n2"}},
	{"a change applied twice", func(_ []*opRecord, e *clusterEnd) {
		endOf(e, "n3").events["nem-1-c0-1"] = []uint64{10, 15}
	}, []string{"applies once", "nem-1-c0-1 has 2 changes on n3"}},
	{"an outcome-unknown answer naming another request", func(ops []*opRecord, _ *clusterEnd) {
		ops[4].reasonID = "nem-1-c9-9"
	}, []string{"misreport", "nem-1-c4-1", `names request_id "nem-1-c9-9"`}},
	{"an answer no member gives", func(ops []*opRecord, _ *clusterEnd) {
		ops[6].wrong = "read at epoch 3: ks.x: unexpected table in keyspace ks"
	}, []string{"misreport", "unexpected table"}},
	{"a dead voter", func(_ []*opRecord, e *clusterEnd) { goneN3(e, "voter") },
		[]string{"no dead voter", "n3 (id id-n3) is a voter in n1's member list", "connection refused", "removed from the cluster"}},
	{"a dead learner", func(_ []*opRecord, e *clusterEnd) { goneN3(e, "learner") },
		[]string{"no dead learner", "n3 (id id-n3) is a learner in n2's member list"}},
	{"a member never promoted", func(_ []*opRecord, e *clusterEnd) { listedIn(e, "n2", "n3").Role = "learner" },
		[]string{"stranded", "n3 (id id-n3) runs and answers but is still a learner in n2's member list"}},
	{"a voter that does not answer", func(_ []*opRecord, e *clusterEnd) {
		m := listedIn(e, "n1", "n2")
		m.Reachable, m.Error = false, "timeout"
	}, []string{"no dead voter", "n2 (id id-n2) is a voter in n1's member list that does not answer: timeout"}},
	{"a running member not in the list", func(_ []*opRecord, e *clusterEnd) {
		l := e.lists["n1"]
		l.Members = l.Members[:2]
	}, []string{"stranded", "n3 runs but is not in n1's member list"}},
	{"a name listed twice", func(_ []*opRecord, e *clusterEnd) {
		l := e.lists["n1"]
		l.Members = append(l.Members, &pb.Member{Name: "n3", Id: "id-n3b", Role: "voter", Reachable: true})
	}, []string{"split", "n1's member list has 2 members named n3"}},
	{"the agreement check disagrees", func(_ []*opRecord, e *clusterEnd) {
		e.check.Agreement = false
		e.check.Members[1].State, e.check.Members[1].Detail = "diverged", "digest differs since epoch 7"
	}, []string{"cluster check", "n2 (id id-n2) diverged at epoch 12"}},
	{"metalog cluster check exits 1", func(_ []*opRecord, e *clusterEnd) {
		e.checkCLI = "exit 1:\nagreement: NO"
	}, []string{"metalog cluster check does not agree", "exit 1"}},
}

// TestNemesisCheckerCatchesBrokenPromises: the checks pass a made-up run
// that kept every promise, and find each broken promise planted in it,
// with the evidence (request id, member, epoch) in the problem.
func TestNemesisCheckerCatchesBrokenPromises(t *testing.T) {
	for _, tc := range brokenPromises {
		t.Run(tc.name, func(t *testing.T) {
			ops, e := madeUpRun()
			tc.plant(ops, e)
			problems := append(e.writeProblems(ops), e.memberProblems()...)
			if tc.want == nil {
				if len(problems) > 0 {
					t.Fatalf("problems found in a run that kept every promise: %q", problems)
				}
				return
			}
			for _, p := range problems {
				if containsAll(p, tc.want) {
					return
				}
			}
			t.Fatalf("no problem says all of %q; problems: %q", tc.want, problems)
		})
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestNemesisHistoryForPorcupine: the history porcupine checks keeps a
// write of unknown outcome (or refused) that some member's history holds
// as applied, leaves out one no history holds, and porcupine, one table at
// a time, finds a stale read, and a read that saw a change no history
// holds.
func TestNemesisHistoryForPorcupine(t *testing.T) {
	op := func(worker int, kind schemaOpKind, table int, call, ret int64, class writeClass, out schemaOutput) *opRecord {
		r := &opRecord{worker: worker, kind: kind, table: table, call: call, ret: ret, class: class, out: out,
			requestID: "r" + string(rune('a'+worker)) + string(rune('0'+table)) + time.Duration(call).String()}
		r.failed = class != writeAcked && kind != opRead
		return r
	}
	sees := func(mask uint8) schemaOutput { return schemaOutput{tables: mask} }
	applied := schemaOutput{applied: true}
	unknownCreate := op(0, opCreate, 1, 0, 100, writeUnknown, schemaOutput{})
	for _, tc := range []struct {
		name    string
		ops     []*opRecord
		held    []*opRecord // writes some member's history holds
		illegal bool
	}{
		{"an acknowledged create, then a read that sees it", []*opRecord{
			op(0, opCreate, 0, 0, 10, writeAcked, applied), op(1, opRead, 0, 20, 30, 0, sees(0b1)),
		}, nil, false},
		{"a stale read after an acknowledged create", []*opRecord{
			op(0, opCreate, 0, 0, 10, writeAcked, applied), op(1, opRead, 0, 20, 30, 0, sees(0)),
		}, nil, true},
		{"a stale read of one table among others", []*opRecord{
			op(0, opCreate, 3, 0, 10, writeAcked, applied), op(2, opCreate, 1, 0, 10, writeAcked, applied),
			op(1, opRead, 0, 20, 30, 0, sees(0b10)),
		}, nil, true},
		{"an unknown create a history holds explains a read", []*opRecord{
			unknownCreate, op(1, opRead, 0, 200, 300, 0, sees(0b10)),
		}, []*opRecord{unknownCreate}, false},
		{"an unknown create no history holds explains nothing", []*opRecord{
			unknownCreate, op(1, opRead, 0, 200, 300, 0, sees(0b10)),
		}, nil, true},
		{"a refused create no history holds explains nothing", []*opRecord{
			op(0, opCreate, 2, 0, 10, writeRefused, schemaOutput{}), op(1, opRead, 0, 20, 30, 0, sees(0b100)),
		}, nil, true},
		{"creates of tables of the clients' own are not in the model", []*opRecord{
			op(0, opUnique, 7, 0, 10, writeAcked, applied), op(1, opRead, 0, 20, 30, 0, sees(0)),
		}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := map[string]bool{}
			for _, r := range tc.held {
				held[r.requestID] = true
			}
			hist := nemesisHistory(tc.ops, func(id string) bool { return held[id] })
			illegal, undecided := linearizabilityProblems(hist, 10*time.Second)
			if len(undecided) > 0 || (len(illegal) > 0) != tc.illegal {
				t.Fatalf("illegal %q, undecided %q; want illegal: %v; history %v", illegal, undecided, tc.illegal, hist)
			}
		})
	}

	// A client's id changes after an operation that returns at infinity.
	hist := nemesisHistory([]*opRecord{unknownCreate, op(0, opRead, 0, 200, 300, 0, sees(0b10))}, func(string) bool { return true })
	if len(hist) != 2 || hist[0].Return != math.MaxInt64 || hist[0].ClientId == hist[1].ClientId {
		t.Fatalf("history %+v: want the unknown create returning at infinity and the next read under another client id", hist)
	}
}

// TestNemesisCatchesReadsAnsweredWhileCutOff: a read a cut-off member
// answered before the partition healed is found; one answered after the
// heal, or failed, or not sent to a cut-off member, is not.
func TestNemesisCatchesReadsAnsweredWhileCutOff(t *testing.T) {
	heals := []int64{100, 500}
	read := func(call, ret int64, cutOff, failed bool) *opRecord {
		return &opRecord{kind: opRead, call: call, ret: ret, cutOff: cutOff, failed: failed}
	}
	early := read(50, 90, true, false)
	ops := []*opRecord{early, read(60, 120, true, false), read(200, 300, true, true), read(10, 20, false, false), read(600, 700, true, false)}
	if got := answeredWhileCutOff(ops, heals); len(got) != 1 || got[0] != early {
		t.Fatalf("answeredWhileCutOff = %v, want only the read answered at 90 before the heal at 100", got)
	}
}

// closingListener is a net.Listener that can cut every connection it
// accepted, as a process killed mid-request would.
type closingListener struct {
	net.Listener
	mu    sync.Mutex // guards conns
	conns []net.Conn
}

func (l *closingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// cut closes every connection accepted so far.
func (l *closingListener) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// TestNemesisClassifiesAnswers: a write's answer is acknowledged, refused
// (an error the member answered that is not outcome-unknown) or unknown
// (DeadlineExceeded or Unknown answered, the client's own deadline, a
// connection cut after the request was sent, no member listening), as a
// nemesis client records it. The member is a gRPC server in this process
// that answers as the request id says: the real members cannot be made
// to give each answer on demand.
func TestNemesisClassifiesAnswers(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &closingListener{Listener: lis}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var req pb.ExecuteRequest
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		switch req.RequestId {
		case "ok":
			return stream.SendMsg(&pb.ExecuteResponse{Epoch: 7, Results: []*pb.StatementResult{{Applied: true, Epoch: 7}}})
		case "unavailable":
			return status.Error(codes.Unavailable, "raftlog: no leader")
		case "invalid":
			return status.Error(codes.InvalidArgument, "line 1:1: no viable alternative")
		case "outcome-unknown":
			st, _ := status.New(codes.DeadlineExceeded, "may still apply").WithDetails(
				&errdetails.ErrorInfo{Reason: outcomeUnknownReason, Domain: "metalog", Metadata: map[string]string{"request_id": "outcome-unknown"}})
			return st.Err()
		case "unknown":
			return errors.New("a handler error without a status")
		case "cut":
			cl.cut()
		}
		<-stream.Context().Done()
		return stream.Context().Err()
	}))
	go srv.Serve(cl)
	defer srv.Stop()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	for _, tc := range []struct {
		requestID, addr string
		want            writeClass
		code            codes.Code
		reason          string
	}{
		{"ok", lis.Addr().String(), writeAcked, codes.OK, ""},
		{"unavailable", lis.Addr().String(), writeRefused, codes.Unavailable, ""},
		{"invalid", lis.Addr().String(), writeRefused, codes.InvalidArgument, ""},
		{"outcome-unknown", lis.Addr().String(), writeUnknown, codes.DeadlineExceeded, outcomeUnknownReason},
		{"unknown", lis.Addr().String(), writeUnknown, codes.Unknown, ""},
		{"hang", lis.Addr().String(), writeUnknown, codes.DeadlineExceeded, ""},
		{"cut", lis.Addr().String(), writeUnknown, codes.Unavailable, ""},
		{"nobody", deadAddr, writeUnknown, codes.DeadlineExceeded, ""},
	} {
		t.Run(tc.requestID, func(t *testing.T) {
			conn, err := grpc.NewClient(tc.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			r := &opRecord{kind: opUnique, requestID: tc.requestID}
			(&nemesisClient{}).do(ctx, pb.NewMetadataServiceClient(conn), r)
			if r.class != tc.want || r.code != tc.code || r.reason != tc.reason || r.failed != (tc.code != codes.OK) {
				t.Fatalf("recorded %s, code %s, reason %q (failed %v, %q); want %s, code %s, reason %q",
					r.class, r.code, r.reason, r.failed, r.msg, tc.want, tc.code, tc.reason)
			}
			if tc.want == writeAcked && (r.epoch != 7 || !r.out.applied) {
				t.Fatalf("acknowledged at epoch %d applied=%v, want epoch 7 applied", r.epoch, r.out.applied)
			}
			if tc.reason != "" && r.reasonID != tc.requestID {
				t.Fatalf("OUTCOME_UNKNOWN request_id %q, want %q", r.reasonID, tc.requestID)
			}
		})
	}
}
