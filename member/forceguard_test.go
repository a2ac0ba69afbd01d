package member

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/metalog/metalog/raftlog"
)

// restartConfig is the configuration member i of c restarts with on its
// own data dir and peer address, forced or not, logging into logs.
func restartConfig(c *testCluster, i int, logs *logBuffer) Config {
	m := c.members[i]
	return Config{Name: m.core.name, DataDir: m.core.cfg.DataDir, PeerAddr: m.PeerAddr(), ForceNewCluster: true,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
}

// TestForceNewClusterRefusedWhileAQuorumAnswers: --force-new-cluster on a
// member of a healthy cluster of three (the flag left on its command
// line) finds the two others answering, refuses naming them, changes
// nothing in its data dir, and the cluster goes on.
func TestForceNewClusterRefusedWhileAQuorumAnswers(t *testing.T) {
	c := startTestCluster(t, 3)
	c.waitLeader(0, 1, 2)
	if _, err := c.exec(0, 10*time.Second, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	c.waitSameSchema()
	var logs logBuffer
	cfg := restartConfig(c, 0, &logs)
	c.members[0].Close()
	before, err := os.ReadFile(filepath.Join(cfg.DataDir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}

	m, err := Start(cfg)
	if err == nil {
		m.Close()
		t.Fatal("--force-new-cluster started while the two other members answer")
	}
	for _, want := range []string{"n2 (", "n3 (", "quorum (3 of 3 voters)", "Stop them first"} {
		if !errors.Is(err, ErrForceRefused) || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v: want ErrForceRefused saying %q", err, want)
		}
	}
	after, err := os.ReadFile(filepath.Join(cfg.DataDir, "raft.db"))
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("raft.db changed by the refused start (%v)", err)
	}
	if dd, err := raftlog.Inspect(cfg.DataDir); err != nil || len(dd.Voters) != 3 || len(dd.Forcings) != 0 {
		t.Errorf("data dir after the refusal: %+v %v", dd, err)
	}
	if _, err := c.exec(1, 10*time.Second, "CREATE TABLE ks.after (id int PRIMARY KEY)"); err != nil {
		t.Fatalf("the cluster after the refusal: %v", err)
	}
}

// TestForceNewClusterWithFewerThanAQuorumAnswering: of five members, the
// one forced finds only one other answering: that is no quorum, so it
// forces, warns naming it, and makes a new cluster with a new id; the one
// that answered, still of the old cluster, stops at its first contact
// with the forced member. A restart with the flag still given warns that
// it was already forced and forces nothing.
func TestForceNewClusterWithFewerThanAQuorumAnswering(t *testing.T) {
	c := startTestCluster(t, 5)
	c.waitLeader(0, 1, 2, 3, 4)
	old := c.members[0].ClusterID()
	var logs logBuffer
	cfg := restartConfig(c, 0, &logs)
	for _, i := range []int{0, 2, 3, 4} {
		c.members[i].Close()
	}
	m, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	waitReady(t, m)
	if got := logs.lines("fewer than a quorum"); len(got) != 1 || !strings.Contains(got[0], "member n2 (") {
		t.Errorf("no WARN naming n2, the member that answered: %q", got)
	}
	if m.ClusterID() == old || m.ClusterID() == 0 {
		t.Errorf("forced cluster id %x, old %x: want a new one", m.ClusterID(), old)
	}
	select {
	case err := <-c.members[1].Err():
		var fe *raftlog.ForcedError
		if !errors.As(err, &fe) || fe.Forcing.To != m.ClusterID() || fe.ByName != "n1" {
			t.Fatalf("n2 stopped with %v, want the ForcedError naming n1 and the new cluster", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("n2, of the old cluster, still runs after contacting the forced member")
	}
	if r := m.Readiness(); !r.Ready {
		t.Fatalf("the forced member: %+v", r)
	}
	// A peer call of the old cluster is told of the forcing; one of an
	// unrelated cluster learns the forced member's cluster.
	ctx := testContext(t)
	_, err = askStatus(metadata.AppendToOutgoingContext(ctx, peerClusterKey, raftlog.FormatID(old)), m.core.peerDial, m.PeerAddr())
	if f, ok := raftlog.ForcingOf(err); !ok || f.From != old || f.To != m.ClusterID() {
		t.Errorf("status call of the old cluster: %v, want the forcing from %x", err, old)
	}
	_, err = askStatus(metadata.AppendToOutgoingContext(ctx, peerClusterKey, "123"), m.core.peerDial, m.PeerAddr())
	if id, ok := raftlog.MismatchOf(err); !ok || id != m.ClusterID() {
		t.Errorf("status call of an unrelated cluster: %v, want a mismatch naming %x", err, m.ClusterID())
	}
	if r := m.Readiness(); !r.Ready {
		t.Fatalf("the forced member after refusing peer calls: %+v", r)
	}
	forced := m.ClusterID()
	m.Close()

	var again logBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&again, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m, err = Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if got := again.lines("already forced at index"); len(got) != 1 || len(again.lines("is now the only voter")) != 0 {
		t.Errorf("restart with the flag still given logged %q, want one WARN and no forcing", got)
	}
	if m.ClusterID() != forced || len(m.core.node.Members()) != 1 {
		t.Errorf("after the restart: cluster %x (forced %x), %d members; want the same cluster, alone", m.ClusterID(), forced, len(m.core.node.Members()))
	}
}

// TestJudgeMemberSeesSplits: the agreement check calls a member that
// answers for another cluster, one whose configuration lists other
// members, and two members that each say they lead a split, and says so
// overall; equal configurations and one leader agree.
func TestJudgeMemberSeesSplits(t *testing.T) {
	three := []ConfigMember{{ID: "1", Name: "n1", Role: "voter"}, {ID: "2", Name: "n2", Role: "voter"}, {ID: "3", Name: "n3", Role: "voter"}}
	alone := []ConfigMember{{ID: "1", Name: "n1", Role: "voter"}}
	n1 := &MemberStatus{Name: "n1", ID: "1", Reachable: true, ClusterID: "aa", Configuration: alone, KnownLeader: "1", Term: 5, AppliedIndex: 9}
	n2 := &MemberStatus{Name: "n2", ID: "2", Reachable: true, ClusterID: "aa", Configuration: three, KnownLeader: "2", Term: 7, AppliedIndex: 9, Leader: true}
	n3 := &MemberStatus{Name: "n3", ID: "3", Reachable: true, ClusterID: "aa", Configuration: three, KnownLeader: "2", Term: 7, AppliedIndex: 9}
	n4 := &MemberStatus{Name: "n4", ID: "4", ClusterID: "bb", Error: "answers for cluster bb, not aa"}
	members := []*MemberStatus{n1, n2, n3, n4}
	leaders := selfLeaders(members)
	for _, tc := range []struct {
		pm     *MemberStatus
		state  string
		detail string
	}{
		{n1, "split", "its configuration lists n1 (voter); n2's lists n1 (voter), n2 (voter), n3 (voter)"},
		{n2, "split", "says it leads (term 7) while n1 (term 5) says so too"},
		{n3, "agrees", ""},
		{n4, "split", "answers for cluster bb, not aa"},
	} {
		state, _, detail := judgeMember(tc.pm, n2, n2, "aa", leaders)
		if state != tc.state || !strings.Contains(detail, tc.detail) {
			t.Errorf("%s: %s %q, want %s %q", tc.pm.Name, state, detail, tc.state, tc.detail)
		}
	}
	listed := []*MemberStatus{{Name: "n1", ID: "1", Reachable: true, Configuration: alone}, {Name: "n2", ID: "2", Reachable: true, Configuration: three}}
	markOtherConfigurations(listed, "2")
	if !strings.HasPrefix(listed[0].Error, "other members: its configuration lists n1 (voter)") || listed[1].Error != "" {
		t.Errorf("ListMembers' marks: n1 %q, n2 %q", listed[0].Error, listed[1].Error)
	}
	checks := []MemberCheck{{Name: "n1", State: "split"}, {Name: "n2", State: "split"}, {Name: "n3", State: "agrees"}, {Name: "n4", State: "unreachable"}}
	if got, want := disagreement(checks, leaders), "two leaders at once (n1, n2); split: n1, n2; unreachable: n4"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if got := disagreement(checks[2:3], leaders[:1]); got != "" {
		t.Errorf("reason of an agreement: %q", got)
	}
}
