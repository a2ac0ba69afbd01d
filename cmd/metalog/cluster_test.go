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
	unreachable, err := printMembers(&out, members)
	if err != nil || !slices.Equal(unreachable, []string{"n2"}) {
		t.Fatalf("printMembers = %q, %v; want [n2]", unreachable, err)
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

func TestJoinCommand(t *testing.T) {
	got := joinCommand(&pb.Member{Name: "n4", PeerAddr: "10.0.0.4:7071"}, " 10.0.0.1:7070 ,10.0.0.2:7070")
	want := "metalog serve --name n4 --data-dir DIR --grpc-addr HOST:PORT --http-addr HOST:PORT --peer-addr 10.0.0.4:7071 --join 10.0.0.1:7070"
	if got != want {
		t.Errorf("joinCommand = %q, want %q", got, want)
	}
}
