package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func TestPrintMembersShowsUnreachableOnes(t *testing.T) {
	members := []*pb.Member{
		{Name: "n1", Id: "a1", PeerAddr: "p1", GrpcAddr: "g1", Role: "voter", Leader: true, Reachable: true, Term: 2, CommitIndex: 6, AppliedIndex: 6, Epoch: 2, Digest: "afb37c136146ffff"},
		{Name: "n2", Id: "a2", PeerAddr: "p2", Role: "learner", Error: "connection refused"},
		{Name: "n3", Id: "a3", PeerAddr: "p3", GrpcAddr: "g3", Role: "voter", Reachable: true, Term: 2, CommitIndex: 6, AppliedIndex: 5, Epoch: 2, Digest: "afb37c13", Alarms: []string{"NOSPACE"}},
	}
	var out bytes.Buffer
	problems, err := printMembers(&out, &pb.ListMembersResponse{Members: members, ClusterId: "aa"})
	if err != nil || !slices.Equal(problems.unreachable, []string{"n2"}) || len(problems.split) != 0 {
		t.Fatalf("printMembers = %+v, %v; want n2 unreachable", problems, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{
		"NAME ID PEER GRPC ROLE LEADER TERM COMMIT APPLIED EPOCH DIGEST ALARMS ERROR",
		"n1 a1 p1 g1 voter * 2 6 6 2 afb37c136146",
		"n2 a2 p2 - learner - - - - - - unreachable: connection refused",
		"n3 a3 p3 g3 voter 2 6 5 2 afb37c13 NOSPACE",
	} {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != want {
			t.Errorf("line %d: %q, want %q", i, got, want)
		}
	}
}

// TestPrintMembersShowsSplits: a member that answers for another cluster
// and one that lists other members are split off: ERROR says how, a
// CLUSTER column appears (only then), and the command's error names them.
func TestPrintMembersShowsSplits(t *testing.T) {
	resp := &pb.ListMembersResponse{ClusterId: "aa", Members: []*pb.Member{
		{Name: "n1", Id: "a1", PeerAddr: "p1", GrpcAddr: "g1", Role: "voter", Leader: true, Reachable: true, Term: 2, CommitIndex: 6, AppliedIndex: 6, Epoch: 2, Digest: "d1", ClusterId: "aa"},
		{Name: "n2", Id: "a2", PeerAddr: "p2", Role: "voter", ClusterId: "bb", Error: "answers for cluster bb, not aa"},
		{Name: "n3", Id: "a3", PeerAddr: "p3", GrpcAddr: "g3", Role: "voter", Reachable: true, Term: 2, CommitIndex: 6, AppliedIndex: 6, Epoch: 2, Digest: "d1", ClusterId: "aa", Error: "other members: its configuration lists n3 (voter)"},
	}}
	var out bytes.Buffer
	problems, err := printMembers(&out, resp)
	if err != nil || !slices.Equal(problems.split, []string{"n2", "n3"}) || len(problems.unreachable) != 0 {
		t.Fatalf("printMembers = %+v, %v; want n2 and n3 split", problems, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{
		"NAME ID CLUSTER PEER GRPC ROLE LEADER TERM COMMIT APPLIED EPOCH DIGEST ALARMS ERROR",
		"n1 a1 aa p1 g1 voter * 2 6 6 2 d1",
		"n2 a2 bb p2 - voter - - - - - - another cluster: answers for cluster bb, not aa",
		"n3 a3 aa p3 g3 voter 2 6 6 2 d1 other members: its configuration lists n3 (voter)",
	} {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != want {
			t.Errorf("line %d: %q, want %q", i, got, want)
		}
	}
	if err := problems.err(3); err == nil || !strings.Contains(err.Error(), "2 of 3 members split off") {
		t.Errorf("status error %v, want the split members named", err)
	}
}

// TestJudgeAnswersAcrossEndpoints: endpoints of two clusters, or of one
// cluster listing different members, disagree even when each answer
// agrees on its own; one cluster seen alike agrees.
func TestJudgeAnswersAcrossEndpoints(t *testing.T) {
	answer := func(ep, cluster string, names ...string) checkAnswer {
		resp := &pb.CheckClusterResponse{Agreement: true, ClusterId: cluster, Reference: names[0]}
		for _, n := range names {
			resp.Members = append(resp.Members, &pb.MemberCheck{Name: n, State: "agrees"})
		}
		return checkAnswer{endpoint: ep, resp: resp}
	}
	v := judgeAnswers([]checkAnswer{answer("a", "5a3c", "n1"), answer("b", "5a3c", "n1"), answer("c", "91fe", "m1")})
	if v.agreement || v.reason != "the endpoints belong to 2 clusters: 5a3c (a, b) and 91fe (c)" || len(v.groups) != 2 {
		t.Errorf("two clusters: %+v", v)
	}
	v = judgeAnswers([]checkAnswer{answer("a", "5a3c", "n1"), answer("b", "5a3c", "n1", "n2", "n3")})
	if v.agreement || !strings.Contains(v.reason, "the endpoints list different members: n1 through a and n1, n2, n3 through b") {
		t.Errorf("different member lists: %+v", v)
	}
	v = judgeAnswers([]checkAnswer{answer("a", "5a3c", "n1", "n2"), answer("b", "5a3c", "n2", "n1")})
	if !v.agreement || v.reason != "" || len(v.groups) != 1 {
		t.Errorf("one cluster seen alike: %+v", v)
	}
	var out bytes.Buffer
	if err := printCheck(&out, v, []checkAnswer{answer("a", "5a3c", "n1", "n2"), answer("b", "5a3c", "n2", "n1")}); err != nil ||
		!strings.HasPrefix(out.String(), "agreement: yes (reference n1, 0 status calls through 2 endpoints)\n") {
		t.Errorf("printCheck: %v\n%s", err, out.String())
	}
}

func TestJoinCommand(t *testing.T) {
	got := joinCommand(&pb.Member{Name: "n4", PeerAddr: "10.0.0.4:7071"}, " 10.0.0.1:7070 ,10.0.0.2:7070")
	want := "metalog serve --name n4 --data-dir DIR --grpc-addr HOST:PORT --http-addr HOST:PORT --cql-addr HOST:PORT --peer-addr 10.0.0.4:7071 --join 10.0.0.1:7070"
	if got != want {
		t.Errorf("joinCommand = %q, want %q", got, want)
	}
}
