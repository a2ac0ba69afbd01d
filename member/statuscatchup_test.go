package member

import (
	"context"
	"testing"
	"time"

	"github.com/metalog/metalog/member/internal/peerrpc"
)

// TestNodeStatusWaitsForEpoch: a member asked for its status at an epoch
// it does not reach within statusCatchUp answers as it is; at one it has
// applied, at once with that epoch. (That it answers as soon as it
// applies an epoch it waits for shows in bench tables --protocol cql,
// where a driver's wait for agreement after each DDL went from 209 ms to
// the DDL's own time.)
func TestNodeStatusWaitsForEpoch(t *testing.T) {
	m := startMember(t, nil)
	p := &peerServer{c: m.core, trust: m.core.trust}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	now := m.core.sm.Current().Epoch
	if st := p.NodeStatus(ctx, now+100, false); st.GetEpoch() != now {
		t.Fatalf("asked at epoch %d, never reached: answered at epoch %d, want %d", now+100, st.GetEpoch(), now)
	}
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	if st := p.NodeStatus(ctx, now+1, false); st.GetEpoch() != now+1 {
		t.Fatalf("asked at epoch %d, applied: answered at epoch %d", now+1, st.GetEpoch())
	}
}

// TestNodeStatusBrief: a brief status has the epoch and digest of the
// full one, without the history and configuration the full one has.
func TestNodeStatusBrief(t *testing.T) {
	m := startMember(t, nil)
	p := &peerServer{c: m.core, trust: m.core.trust}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	full, brief := p.NodeStatus(ctx, 0, false), p.NodeStatus(ctx, 0, true)
	if len(full.GetHistory()) == 0 || len(full.GetConfiguration()) == 0 {
		t.Fatalf("full status: %d history entries, %d configuration members; want some", len(full.GetHistory()), len(full.GetConfiguration()))
	}
	if len(brief.GetHistory()) != 0 || len(brief.GetConfiguration()) != 0 || len(brief.GetAlarms()) != 0 {
		t.Errorf("brief status has history %v, configuration %v, alarms %v", brief.GetHistory(), brief.GetConfiguration(), brief.GetAlarms())
	}
	if brief.GetEpoch() != full.GetEpoch() || brief.GetDigest() != full.GetDigest() || brief.GetDigest() == "" ||
		brief.GetCqlAddr() != full.GetCqlAddr() || !brief.GetReachable() {
		t.Errorf("brief status %v, full %v: epoch, digest, addresses differ", brief, full)
	}
}

// TestListMembersKeepsStatusConnections: ListMembers asks the other
// members over one kept connection each (statusConns), the same from one
// call to the next; a member no longer asked for has its connection
// closed; once the member stops, a status call fails rather than dial.
func TestListMembersKeepsStatusConnections(t *testing.T) {
	c := startTestCluster(t, 3)
	c.waitLeader(0, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := c.members[0]
	conns := func() map[string]any {
		p := m.core.statusConns
		p.mu.Lock()
		defer p.mu.Unlock()
		out := map[string]any{}
		for addr, conn := range p.conns {
			out[addr] = conn
		}
		return out
	}
	for range 2 {
		st, err := m.Cluster().BriefMembersAt(ctx, m.core.sm.Current().Epoch)
		if err != nil {
			t.Fatal(err)
		}
		for _, ms := range st.Members {
			if !ms.Reachable {
				t.Fatalf("member %s unreachable: %s", ms.Name, ms.Error)
			}
		}
	}
	first := conns()
	if len(first) != 2 {
		t.Fatalf("%d kept connections, want one per other member (2)", len(first))
	}
	if _, err := m.Cluster().ListMembers(ctx); err != nil {
		t.Fatal(err)
	}
	for addr, conn := range conns() {
		if first[addr] != conn {
			t.Errorf("the connection to %s was replaced between two calls", addr)
		}
	}
	keep := c.members[1].PeerAddr()
	m.core.statusConns.keepOnly(map[uint64]string{1: keep})
	if got := conns(); len(got) != 1 || got[keep] == nil {
		t.Errorf("after keepOnly(%s): %v", keep, got)
	}
	m.core.statusConns.close()
	if _, err := m.core.statusConns.ask(ctx, keep, &peerrpc.NodeStatusRequest{}); err != errStatusConnsClosed {
		t.Errorf("a status call after close: %v, want %v", err, errStatusConnsClosed)
	}
}
