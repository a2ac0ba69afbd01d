package member

import (
	"context"
	"testing"
	"time"
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
	if st := p.NodeStatus(ctx, now+100); st.GetEpoch() != now {
		t.Fatalf("asked at epoch %d, never reached: answered at epoch %d, want %d", now+100, st.GetEpoch(), now)
	}
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	if st := p.NodeStatus(ctx, now+1); st.GetEpoch() != now+1 {
		t.Fatalf("asked at epoch %d, applied: answered at epoch %d", now+1, st.GetEpoch())
	}
}
