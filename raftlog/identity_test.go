package raftlog

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
)

// TestIdentityRecordedAtStart: a new log records its cluster id and how
// it was begun; a restart keeps them, refuses another cluster's id, and
// Inspect reads them without opening the log.
func TestIdentityRecordedAtStart(t *testing.T) {
	dir := t.TempDir()
	if dd, err := Inspect(dir); err != nil || dd.Exists {
		t.Fatalf("Inspect of an empty dir: %+v %v", dd, err)
	}
	n, err := Start(Config{ID: 1, Peers: peers(1), Dir: dir, Applier: &recorder{}, TickInterval: testTick, ClusterID: 0xa1})
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, n)
	if n.ClusterID() != 0xa1 {
		t.Errorf("ClusterID = %x, want a1", n.ClusterID())
	}
	n.Stop()
	dd, err := Inspect(dir)
	if err != nil || !dd.Exists || dd.MemberID != 1 || dd.ClusterID != 0xa1 || dd.Origin != OriginBootstrap || !dd.HasMembership ||
		!slices.Equal(dd.Voters, []uint64{1}) || len(dd.Learners) != 0 || len(dd.Forcings) != 0 || dd.ForcedAway {
		t.Fatalf("Inspect after bootstrap: %+v %v", dd, err)
	}
	_, err = Start(Config{ID: 1, Dir: dir, Applier: &recorder{}, TickInterval: testTick, ClusterID: 0xb2})
	if !errors.Is(err, ErrClusterMismatch) || !strings.Contains(err.Error(), "a1") || !strings.Contains(err.Error(), "b2") {
		t.Fatalf("restart with another cluster id: %v, want ErrClusterMismatch naming both", err)
	}
	n = startSingle(t, dir, &recorder{}, 0) // ClusterID 0: the recorded one
	if n.ClusterID() != 0xa1 {
		t.Errorf("after restart ClusterID = %x, want a1", n.ClusterID())
	}
}

// TestHistoryNamingRecordedAtStart: a new log records Config.Naming with
// its cluster id (a bootstrap that begins a history, one as versions
// before history names made, a join that expects a name); a restart keeps
// what was recorded whatever its Config.Naming, and Inspect and the node
// read it.
func TestHistoryNamingRecordedAtStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		join   bool
		naming HistoryNaming
	}{
		{"bootstrap begins a history", false, NamingBegun},
		{"bootstrap as before history names", false, NamingNone},
		{"join of a named cluster", true, NamingExpected},
		{"join of a cluster without names", true, NamingNone},
	} {
		dir := t.TempDir()
		cfg := Config{ID: 1, Dir: dir, Applier: &recorder{}, TickInterval: testTick, ClusterID: 0xa1, Naming: tc.naming}
		if tc.join {
			cfg.Join = true
		} else {
			cfg.Peers = peers(1)
		}
		n, err := Start(cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := n.HistoryNaming(); got != tc.naming {
			t.Errorf("%s: HistoryNaming = %q, want %q", tc.name, got, tc.naming)
		}
		if !tc.join {
			waitReady(t, n)
		}
		n.Stop()
		if dd, err := Inspect(dir); err != nil || dd.Naming != tc.naming {
			t.Errorf("%s: Inspect: naming %q (%v), want %q", tc.name, dd.Naming, err, tc.naming)
		}
		if tc.join {
			continue
		}
		n = startSingle(t, dir, &recorder{}, 0) // Naming none: a restart keeps what the log recorded
		if got := n.HistoryNaming(); got != tc.naming {
			t.Errorf("%s: after a restart HistoryNaming = %q, want %q", tc.name, got, tc.naming)
		}
	}
}

// TestIncompleteJoinResumesOnlyAsAJoin: a log begun to join that never
// received its membership is refused without Join (it would otherwise
// bootstrap a cluster of its own), and starts again as a join with it.
func TestIncompleteJoinResumesOnlyAsAJoin(t *testing.T) {
	dir := t.TempDir()
	n, err := Start(Config{ID: 4, Join: true, Dir: dir, Applier: &recorder{}, TickInterval: testTick, ClusterID: 0xc3})
	if err != nil {
		t.Fatal(err)
	}
	n.Stop()
	dd, err := Inspect(dir)
	if err != nil || !dd.Exists || dd.MemberID != 4 || dd.ClusterID != 0xc3 || dd.Origin != OriginJoin || dd.HasMembership || len(dd.Voters) != 0 {
		t.Fatalf("Inspect after an incomplete join: %+v %v", dd, err)
	}
	_, err = Start(Config{ID: 4, Peers: peers(4), Dir: dir, Applier: &recorder{}, TickInterval: testTick})
	if !errors.Is(err, ErrJoinIncomplete) || !strings.Contains(err.Error(), "--join") {
		t.Fatalf("restart without Join: %v, want ErrJoinIncomplete saying how to resume", err)
	}
	n, err = Start(Config{ID: 4, Join: true, Dir: dir, Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatalf("restart as a join: %v", err)
	}
	defer n.Stop()
	if len(n.Members()) != 0 || n.ClusterID() != 0xc3 {
		t.Errorf("resumed join: members %v, cluster %x", n.Members(), n.ClusterID())
	}
}

// TestLeaderOfAnotherClusterStopsTheForeignMember: a member whose log
// belongs to cluster B, added as a learner by cluster A's leader, refuses
// the leader's stream and stops with ErrClusterMismatch; cluster A goes on.
// A member of another cluster that only asks for votes is refused without
// stopping anyone.
func TestLeaderOfAnotherClusterStopsTheForeignMember(t *testing.T) {
	c := newGRPCCluster(t)
	for _, id := range []uint64{1, 2, 3} {
		c.listen(id)
	}
	a := []Peer{{ID: 1, Context: []byte(c.node(1).addr)}, {ID: 2, Context: []byte(c.node(2).addr)}}
	for _, id := range []uint64{1, 2} {
		c.start(id, func(cfg *Config) { cfg.Peers, cfg.ClusterID = a, 0xaa })
	}
	// Node 3 belongs to cluster B, which names node 1 as its other voter:
	// it campaigns, and its vote requests reach cluster A's node 1.
	b := []Peer{{ID: 3, Context: []byte(c.node(3).addr)}, {ID: 1, Context: []byte(c.node(1).addr)}}
	foreign := c.start(3, func(cfg *Config) { cfg.Peers, cfg.ClusterID = b, 0xbb })
	leader := c.waitLeader(1, 2)
	waitFor(t, "node 1 refusing node 3's vote requests", func() bool {
		c.node(1).tr.mismatches.mu.Lock()
		defer c.node(1).tr.mismatches.mu.Unlock()
		return len(c.node(1).tr.mismatches.last) > 0
	})
	for _, id := range []uint64{1, 2, 3} {
		if err := c.node(id).node.Err(); err != nil {
			t.Fatalf("node %d stopped after a refused vote request: %v", id, err)
		}
	}

	ctx := testContext(t)
	if err := c.node(leader).node.AddLearner(ctx, 3, []byte(c.node(3).addr)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-foreign.node.Done():
	case <-time.After(waitTimeout):
		t.Fatal("node 3 did not stop when cluster A's leader sent to it")
	}
	if err := foreign.node.Err(); !errors.Is(err, ErrClusterMismatch) || !strings.Contains(err.Error(), "aa") || !strings.Contains(err.Error(), "bb") {
		t.Fatalf("node 3 stopped with %v, want ErrClusterMismatch naming both clusters", err)
	}
	proposeMany(t, ctx, "a", 3, 1, c.node(leader).node)
	for _, id := range []uint64{1, 2} {
		if err := c.node(id).node.Err(); err != nil {
			t.Fatalf("cluster A's node %d stopped: %v", id, err)
		}
	}
}

// foreignRecorder is a stepRecorder of cluster 0xbb that records
// ReportForeign.
type foreignRecorder struct {
	stepRecorder
	reported error
}

func (*foreignRecorder) ClusterID() uint64         { return 0xbb }
func (f *foreignRecorder) ReportForeign(err error) { f.reported = err }

// TestSnapshotOfAnotherClusterIsRefused: a snapshot stream naming another
// cluster is refused and stops the receiver (only a leader sends one); one
// naming the same cluster, or none (an earlier release), is taken.
func TestSnapshotOfAnotherClusterIsRefused(t *testing.T) {
	tr := NewTransport(TransportConfig{ID: 2, Logger: testLogger()})
	defer tr.Stop()
	rec := &foreignRecorder{}
	tr.SetNode(rec)
	for _, tc := range []struct {
		md      metadata.MD
		refused bool
	}{
		{nil, false},
		{metadata.Pairs(clusterIDKey, "bb"), false},
		{metadata.Pairs(clusterIDKey, "aa"), true},
	} {
		rec.reported = nil
		err := tr.snapshotCluster(tc.md, 1, true)
		if (err != nil) != tc.refused || (rec.reported != nil) != tc.refused {
			t.Errorf("%v: err %v, reported %v; want refused=%v", tc.md, err, rec.reported, tc.refused)
		}
		if tc.refused && (!errors.Is(err, ErrClusterMismatch) || !strings.Contains(err.Error(), "cluster aa") || !strings.Contains(err.Error(), "cluster bb")) {
			t.Errorf("refusal %v does not name both clusters", err)
		}
	}
}

// forcedRecorder is a foreignRecorder whose log (cluster 0xbb) was forced
// from cluster 0xaa.
type forcedRecorder struct {
	foreignRecorder
}

var testForcing = Forcing{From: 0xaa, To: 0xbb, Index: 42, By: 2}

func (*forcedRecorder) ForcedFrom(cluster uint64) (Forcing, bool) {
	return testForcing, cluster == testForcing.From
}

// TestSnapshotOfTheClusterForcedFromIsRefusedWithoutStopping: a forced
// member refuses a snapshot of the cluster it was forced from with a status
// that names the forcing, and goes on; a member of that old cluster that
// gets such an answer stops with a ForcedError, one of another cluster
// ignores it.
func TestSnapshotOfTheClusterForcedFromIsRefusedWithoutStopping(t *testing.T) {
	tr := NewTransport(TransportConfig{ID: 2, Logger: testLogger()})
	defer tr.Stop()
	rec := &forcedRecorder{}
	tr.SetNode(rec)
	err := tr.snapshotCluster(metadata.Pairs(clusterIDKey, "aa"), 1, true)
	if f, ok := ForcingOf(err); !ok || f != testForcing || rec.reported != nil {
		t.Fatalf("snapshot of the cluster forced from: err %v (forcing %+v %v), reported %v; want the forcing and no stop", err, f, ok, rec.reported)
	}
	if err := tr.snapshotCluster(metadata.Pairs(clusterIDKey, "cc"), 1, true); !errors.Is(err, ErrClusterMismatch) || rec.reported == nil {
		t.Fatalf("snapshot of an unrelated cluster: %v, reported %v; want a refusal that stops the receiver", err, rec.reported)
	}

	old := NewTransport(TransportConfig{ID: 1, Logger: testLogger()})
	defer old.Stop()
	oldNode := &foreignRecorder{} // cluster 0xbb
	old.SetNode(oldNode)
	toldForced(old.local(), old.log, 2, testForcing) // forced from aa, not from bb
	if oldNode.reported != nil {
		t.Fatalf("a member of cluster bb stopped on the word of a forcing of aa: %v", oldNode.reported)
	}
	toldForced(old.local(), old.log, 2, Forcing{From: 0xbb, To: 0xdd, Index: 7, By: 2})
	var fe *ForcedError
	if !errors.As(oldNode.reported, &fe) || fe.Forcing.To != 0xdd || !errors.Is(oldNode.reported, ErrClusterForced) {
		t.Fatalf("a member of the cluster forced from: reported %v, want a ForcedError", oldNode.reported)
	}
}

// TestPeerRefusalStatusesRoundTrip: ForcedStatus and MismatchStatus carry
// what ForcingOf and MismatchOf read back, and neither reads the other's
// or a plain error.
func TestPeerRefusalStatusesRoundTrip(t *testing.T) {
	forced := ForcedStatus(testForcing, "refused")
	if f, ok := ForcingOf(forced); !ok || f != testForcing {
		t.Errorf("ForcingOf(ForcedStatus) = %+v %v", f, ok)
	}
	mismatch := MismatchStatus(0xcc, "refused")
	if id, ok := MismatchOf(mismatch); !ok || id != 0xcc {
		t.Errorf("MismatchOf(MismatchStatus) = %x %v", id, ok)
	}
	for _, err := range []error{nil, errors.New("plain"), mismatch} {
		if _, ok := ForcingOf(err); ok {
			t.Errorf("ForcingOf(%v) reads a forcing", err)
		}
	}
	if _, ok := MismatchOf(forced); ok {
		t.Errorf("MismatchOf reads a forcing's status")
	}
}
