package member

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// TestHistoryIDOfClusters: the history id is made from the cluster id
// and the nonce of its history name, the same every time, different for
// different clusters and for different nonces of one cluster, never 0 (a
// cluster without id has one too), and differs from the cluster id;
// IdentityOf gives none unless the name is the cluster's, except for a
// cluster that records no naming and holds no name, which has the id
// derived from its cluster id (HistoryID(cluster, 0), the bytes versions
// before history names hashed); ParseHistoryID
// reads what FormatHistoryID writes (0 is "") and refuses the rest.
func TestHistoryIDOfClusters(t *testing.T) {
	seen := map[uint64]string{}
	for _, cluster := range []uint64{0, 1, 2, 0xdeadbeef, 1 << 63} {
		for _, nonce := range []uint64{1, 2, 0xfeedface, 1 << 63} {
			h := HistoryID(cluster, nonce)
			if h == 0 || h == cluster || HistoryID(cluster, nonce) != h {
				t.Errorf("HistoryID(%x, %x) = %x: want a fixed id, not 0 nor the cluster id", cluster, nonce, h)
			}
			if other, dup := seen[h]; dup {
				t.Errorf("%s and cluster %x nonce %x share history id %x", other, cluster, nonce, h)
			}
			seen[h] = fmt.Sprintf("cluster %x nonce %x", cluster, nonce)
			if got, err := ParseHistoryID(FormatHistoryID(h)); err != nil || got != h {
				t.Errorf("ParseHistoryID(FormatHistoryID(%x)) = %x, %v", h, got, err)
			}
			name := metadata.HistoryName{Cluster: cluster, Nonce: nonce}
			for _, naming := range []raftlog.HistoryNaming{raftlog.NamingBegun, raftlog.NamingExpected, raftlog.NamingNone} {
				if id := IdentityOf(cluster, name, naming); id != (Identity{ClusterID: cluster, HistoryID: h}) {
					t.Errorf("IdentityOf(%x, %+v, %q) = %+v", cluster, name, naming, id)
				}
			}
			for _, naming := range []raftlog.HistoryNaming{raftlog.NamingBegun, raftlog.NamingExpected} {
				if id := IdentityOf(cluster+1, name, naming); id != (Identity{ClusterID: cluster + 1}) {
					t.Errorf("IdentityOf(%x, %+v, %q) = %+v: the name of another cluster names no history of this one", cluster+1, name, naming, id)
				}
			}
			if id := IdentityOf(cluster+1, name, raftlog.NamingNone); id != (Identity{ClusterID: cluster + 1}) {
				t.Errorf("IdentityOf(%x, %+v, none) = %+v: a name of another cluster (a restored or forced history) makes a cluster that names its history", cluster+1, name, id)
			}
		}
	}
	// A cluster that does not name its history keeps the id versions
	// before history names derived from its cluster id alone.
	for cluster, want := range map[uint64]string{0: "b605913ce7e40288", 1: "8a75c3c0f8aa4456", 0xdeadbeef: "20110b2590e0ffed"} {
		if got := FormatHistoryID(HistoryID(cluster, 0)); got != want {
			t.Errorf("HistoryID(%x, 0) = %s, want %s (the id versions before history names answer)", cluster, got, want)
		}
		if id := IdentityOf(cluster, metadata.HistoryName{}, raftlog.NamingNone); FormatHistoryID(id.HistoryID) != want {
			t.Errorf("IdentityOf(%x, no name, none) = %+v, want history %s", cluster, id, want)
		}
	}
	if FormatHistoryID(0) != "" {
		t.Errorf("FormatHistoryID(0) = %q, want none", FormatHistoryID(0))
	}
	if id, err := ParseHistoryID(""); id != 0 || err != nil {
		t.Errorf(`ParseHistoryID(""): %x, %v; want 0 (not known)`, id, err)
	}
	for _, bad := range []string{"0", "xyz", "-1", "12345678901234567", " 1"} {
		if _, err := ParseHistoryID(bad); err == nil || !strings.Contains(err.Error(), "history id") {
			t.Errorf("ParseHistoryID(%q): %v, want an error naming the history id", bad, err)
		}
	}
}

// TestWatchAndHistoryCheckTheHistoryID: a member's identity is its
// cluster's, with the history id of the name its cluster gave its
// history; a watch or history read naming that history id is served, one
// naming another is refused with FailedPrecondition and an error naming
// both ids (errors.Is ErrHistoryChanged); naming none is not checked.
func TestWatchAndHistoryCheckTheHistoryID(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL})
	id := m.Identity()
	name := m.core.sm.Current().History
	if id.ClusterID != m.ClusterID() || id.HistoryID == 0 || id.HistoryID != HistoryID(m.ClusterID(), name.Nonce) || name.Cluster != m.ClusterID() {
		t.Fatalf("identity %+v of a member of cluster %x whose history is named %+v", id, m.ClusterID(), name)
	}
	other := HistoryID(m.ClusterID(), name.Nonce+1)
	for _, hid := range []uint64{0, id.HistoryID} {
		if _, err := m.Reads().History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: hid}); err != nil {
			t.Errorf("history naming history id %x: %v", hid, err)
		}
		f := startFeed(t, m, WatchQuery{From: uptr(0), HistoryID: hid})
		if msg := f.next(t, false); msg.Type != WatchEvents || msg.Epoch != 1 {
			t.Errorf("watch naming history id %x: %+v, want the events of epoch 1", hid, msg)
		}
	}
	_, herr := m.Reads().History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: other})
	werr := m.Reads().Watch(testContext(t), WatchQuery{From: uptr(0), HistoryID: other}, func(WatchMessage) error {
		t.Error("a watch of another history sent a message")
		return nil
	})
	for op, err := range map[string]error{"history": herr, "watch": werr} {
		var hc *HistoryChangedError
		if !errors.Is(err, ErrHistoryChanged) || !errors.As(err, &hc) || kinds(err) != "[ErrHistoryChanged]" {
			t.Fatalf("%s of another history: %v (%v), want a *HistoryChangedError only", op, err, kinds(err))
		}
		if hc.Requested != other || hc.Identity != id ||
			!strings.HasPrefix(err.Error(), op+": history id "+FormatHistoryID(other)+" is not this cluster's") ||
			!strings.Contains(err.Error(), "history "+FormatHistoryID(id.HistoryID)) {
			t.Errorf("%s of another history: %v, want both history ids named", op, err)
		}
	}
}

// waitNamed waits until m's identity has a history id and returns it.
func waitNamed(t *testing.T, m *Member) Identity {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if id := m.Identity(); id.HistoryID != 0 {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the history was not named within 20s (readiness: %s)", m.Name(), m.Readiness().Detail)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLeaderNamesTheHistory: a member whose cluster's history has no name
// yet, although it leads and has applied its term's start, has an
// identity without history id and is not ready, saying why; it answers a
// watch or history read naming a history id with Unavailable
// (ErrHistoryUnnamed) and sends it nothing, and serves one naming none.
// Once it may name the history it does: the identity has the history id
// of the applied name, the member is ready, the epoch did not move, and a
// restart keeps the id.
func TestLeaderNamesTheHistory(t *testing.T) {
	hold := make(chan struct{})
	dir := t.TempDir()
	cfg := func(c *Config) { c.DataDir = dir; c.holdHistoryName = hold }
	m, err := Start(Config{Name: "n1", PeerAddr: "127.0.0.1:0", DataDir: dir, holdHistoryName: hold})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for !m.core.node.Caught() || m.core.node.Status().Leader != m.ID() {
		if time.Now().After(deadline) {
			t.Fatalf("no leader: %s", m.Readiness().Detail)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if id := m.Identity(); id.HistoryID != 0 || id.ClusterID != m.ClusterID() || id.ClusterID == 0 {
		t.Fatalf("identity before the history is named: %+v, want cluster %x and no history id", id, m.ClusterID())
	}
	if r := m.Readiness(); r.Ready || !strings.Contains(r.Detail, "has not named its history yet") {
		t.Errorf("readiness before the history is named: %+v, want not ready, saying why", r)
	}
	someID := HistoryID(m.ClusterID(), 1)
	_, herr := m.Reads().History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: someID})
	werr := m.Reads().Watch(testContext(t), WatchQuery{From: uptr(0), HistoryID: someID}, func(WatchMessage) error {
		t.Error("a watch naming a history id sent a message before the history was named")
		return nil
	})
	for op, err := range map[string]error{"history": herr, "watch": werr} {
		if !errors.Is(err, ErrHistoryUnnamed) || kinds(err) != "[ErrHistoryUnnamed]" ||
			!strings.HasPrefix(err.Error(), op+": history id "+FormatHistoryID(someID)+": the cluster has not named its history yet; try again") {
			t.Errorf("%s naming a history id before the history is named: %v (%v), want ErrHistoryUnnamed only", op, err, kinds(err))
		}
	}
	if _, err := m.Reads().History(testContext(t), HistoryQuery{From: uptr(0)}); err != nil {
		t.Errorf("history naming no history id before the history is named: %v", err)
	}
	f := startFeed(t, m, WatchQuery{})
	if msg := f.next(t, true); msg.Type != WatchProgress || msg.Epoch != 0 {
		t.Errorf("watch naming no history id before the history is named: %+v, want progress at epoch 0", msg)
	}
	epoch := m.core.sm.Current().Epoch

	close(hold)
	id := waitNamed(t, m)
	name := m.core.sm.Current().History
	if id != (Identity{ClusterID: m.ClusterID(), HistoryID: HistoryID(m.ClusterID(), name.Nonce)}) || name.Cluster != m.ClusterID() {
		t.Fatalf("identity %+v once named %+v", id, name)
	}
	waitReady(t, m)
	if got := m.core.sm.Current().Epoch; got != epoch {
		t.Errorf("naming the history moved the epoch from %d to %d", epoch, got)
	}
	if _, err := m.Reads().History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: id.HistoryID}); err != nil {
		t.Errorf("history naming the history id once named: %v", err)
	}
	f.stop(t)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// Restarted (still held: a named history needs no new name), the
	// member has the same id as soon as it has replayed its state.
	m2 := startMember(t, cfg)
	if got := m2.Identity(); got != id {
		t.Errorf("identity after a restart: %+v, want %+v", got, id)
	}
}

// TestBootstrapsGetNewHistoryIDs: two clusters bootstrapped from empty
// data dirs with the same founding member have the same cluster id (it is
// derived from the founding members), but their histories get different
// ids: each named its own.
func TestBootstrapsGetNewHistoryIDs(t *testing.T) {
	a, b := startMember(t, nil), startMember(t, nil)
	ia, ib := waitNamed(t, a), waitNamed(t, b)
	if ia.ClusterID != ib.ClusterID {
		t.Fatalf("cluster ids %x and %x: the test wants two bootstraps with the same --initial-cluster", ia.ClusterID, ib.ClusterID)
	}
	if ia.HistoryID == ib.HistoryID {
		t.Errorf("two bootstraps of cluster %x share history id %s", ia.ClusterID, FormatHistoryID(ia.HistoryID))
	}
	execOK(t, a, Request{Statements: shopDDL})
	_, err := a.Reads().History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: ib.HistoryID})
	if !errors.Is(err, ErrHistoryChanged) {
		t.Errorf("history of one bootstrap naming the other's history id: %v, want ErrHistoryChanged", err)
	}
}

// TestMembersShareTheHistoryID: every member of a cluster reports the
// history id the leader named, through a leader change.
func TestMembersShareTheHistoryID(t *testing.T) {
	c := startTestCluster(t, 3)
	leader := c.waitLeader(0, 1, 2)
	id := waitNamed(t, c.members[leader])
	for i, m := range c.members {
		if got := waitNamed(t, m); got != id {
			t.Errorf("member %d: identity %+v, the leader's %+v", i, got, id)
		}
	}
	c.members[leader].core.node.TransferLeadership(c.ids[(leader+1)%3])
	deadline := time.Now().Add(20 * time.Second)
	for c.members[leader].core.node.Status().Leader == c.ids[leader] && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	next := c.waitLeader(0, 1, 2)
	if next == leader {
		t.Fatal("the leadership did not move")
	}
	if _, err := c.exec(next, 10*time.Second, shopDDL); err != nil {
		t.Fatal(err)
	}
	c.waitSameSchema()
	for i, m := range c.members {
		if got := m.Identity(); got != id {
			t.Errorf("member %d after a leader change: identity %+v, want %+v", i, got, id)
		}
	}
}

// TestWatchFromAheadOfTheMemberWaits: a watch from an epoch the member has
// not reached waits for it: its progress messages carry the member's own
// epoch, never the one asked for, and the epochs after it are sent as they
// are made (those up to it are the consumer's already). With a deadline,
// the wait ends DeadlineExceeded naming both epochs.
func TestWatchFromAheadOfTheMemberWaits(t *testing.T) {
	m := startMember(t, func(c *Config) { c.WatchProgressInterval = 20 * time.Millisecond })
	execOK(t, m, Request{Statements: shopDDL})
	f := startFeed(t, m, WatchQuery{From: uptr(4)})
	for range 3 {
		if msg := f.next(t, true); msg.Type != WatchProgress || msg.Epoch != 1 {
			t.Fatalf("a watch from epoch 4 of a member at epoch 1: %+v, want progress at epoch 1", msg)
		}
	}
	for _, ddl := range []string{"CREATE TABLE shop.a (id int PRIMARY KEY)", "CREATE TABLE shop.b (id int PRIMARY KEY)",
		"CREATE TABLE shop.c (id int PRIMARY KEY)", "CREATE TABLE shop.d (id int PRIMARY KEY)"} {
		execOK(t, m, Request{Statements: ddl})
	}
	for {
		msg := f.next(t, true)
		cur := m.core.sm.Current().Epoch
		if msg.Epoch > cur {
			t.Fatalf("%s message at epoch %d while the member is at %d", msg.Type, msg.Epoch, cur)
		}
		if msg.Type == WatchProgress {
			continue
		}
		if got := strings.Join(eventsLines(msg), "\n"); msg.Type != WatchEvents || got != "5 CREATE TABLE shop.d" {
			t.Fatalf("first events of a watch from epoch 4: %s %q, want epoch 5 alone", msg.Type, got)
		}
		break
	}

	ctx, cancel := context.WithTimeout(testContext(t), 100*time.Millisecond)
	defer cancel()
	err := m.Reads().Watch(ctx, WatchQuery{From: uptr(99)}, func(msg WatchMessage) error {
		if msg.Epoch > 5 {
			t.Errorf("a watch from epoch 99 sent %s at epoch %d; the member is at 5", msg.Type, msg.Epoch)
		}
		return nil
	})
	if kinds(err) != "[context.DeadlineExceeded]" || !strings.Contains(err.Error(), "watch from_epoch 99: this member (history ") ||
		!strings.Contains(err.Error(), "was still at epoch 5 when the request deadline passed") {
		t.Fatalf("a watch from epoch 99 past its deadline: %v (%v), want the deadline naming both epochs", err, kinds(err))
	}
}

// TestPlanRefusedNamesWhy: a plan that cannot be made, or that would be
// refused at a statement, is a *PlanRefusedError (FailedPrecondition,
// errors.Is ErrPlanRefused) naming the statement, with the cause behind
// it (errors.As).
func TestPlanRefusedNamesWhy(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, _, err := m.Writes().SetGuardrails(ctx, "test", "", map[string]string{"tables_warn_threshold": "1", "tables_fail_threshold": "1"}); err != nil {
		t.Fatal(err)
	}
	desired := shopDDL + "; CREATE TABLE shop.a (k int, c int, PRIMARY KEY (k, c)); CREATE TABLE shop.b (id int PRIMARY KEY)"
	_, err := m.Writes().Plan(ctx, PlanRequest{Desired: desired})
	var pe *PlanRefusedError
	if !errors.As(err, &pe) || !errors.Is(err, ErrPlanRefused) || errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, guardrails.ErrFailed) {
		t.Fatalf("a plan past tables_fail_threshold: %v (%v), want a *PlanRefusedError of a guardrail", err, kinds(err))
	}
	if pe.Position != 3 || !strings.HasPrefix(pe.Statement, "CREATE TABLE shop.b") ||
		!strings.HasPrefix(err.Error(), "the plan would be refused: statement 3 of 3: ") ||
		!strings.Contains(err.Error(), "tables_fail_threshold") {
		t.Errorf("a plan past tables_fail_threshold: %v (statement %d %q), want statement 3 and the guardrail named", err, pe.Position, pe.Statement)
	}
	if _, _, err := m.Writes().SetGuardrails(ctx, "test", "", map[string]string{"tables_fail_threshold": "-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Writes().Execute(ctx, Request{Statements: desired, Atomic: true}); err != nil {
		t.Fatal(err)
	}
	reordered := strings.Replace(desired, "PRIMARY KEY (k, c))", "PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)", 1)
	_, err = m.Writes().Plan(ctx, PlanRequest{Desired: reordered})
	if !errors.As(err, &pe) || pe.Statement != "" || !errors.Is(err, ErrPlanRefused) || errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "shop.a") {
		t.Errorf("a clustering order change: %v (%v), want a *PlanRefusedError without statement naming shop.a", err, kinds(err))
	}
}

// TestFollowerNamesTheHistoryWhenTheLeaderDoesNot: a leader that does not
// name the history (held here; a leader that joined the cluster, which
// never names it) does not keep the members from being named and ready:
// a caught-up founding follower names it after its grace, and every
// member reports the same id.
func TestFollowerNamesTheHistoryWhenTheLeaderDoesNot(t *testing.T) {
	holds := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
	c := startTestClusterWith(t, 3, func(i int, cfg *Config) { cfg.holdHistoryName = holds[i] })
	leader := c.waitLeader(0, 1, 2)
	for i, m := range c.members {
		if id := m.Identity(); id.HistoryID != 0 {
			t.Fatalf("member %d named while every member is held: %+v", i, id)
		}
	}
	follower := (leader + 1) % 3
	close(holds[follower])
	id := waitNamed(t, c.members[follower])
	for i, m := range c.members {
		if got := waitNamed(t, m); got != id {
			t.Errorf("member %d: identity %+v, want %+v", i, got, id)
		}
		waitReady(t, m)
	}
	if st := c.members[leader].core.node.Status(); st.Leader != c.ids[leader] {
		t.Logf("the leadership moved to %x meanwhile", st.Leader)
	}
	for _, i := range []int{leader, (leader + 2) % 3} {
		close(holds[i])
	}
}

// TestClusterBegunBeforeHistoryNamesKeepsItsDerivedID: the members of a
// cluster whose data dirs were made as versions before history names made
// them (no naming recorded) are ready without a name, all report the id
// derived from the cluster id (HistoryID(cluster, 0)), never propose a
// name (the applied state holds none after changes and a leader change),
// and keep that id once restarted by this version (a rolling upgrade).
func TestClusterBegunBeforeHistoryNamesKeepsItsDerivedID(t *testing.T) {
	c := startTestClusterWith(t, 3, func(_ int, cfg *Config) { cfg.legacyHistory = true })
	leader := c.waitLeader(0, 1, 2)
	cluster := c.members[0].ClusterID()
	want := Identity{ClusterID: cluster, HistoryID: HistoryID(cluster, 0)}
	check := func(when string) {
		t.Helper()
		for i, m := range c.members {
			waitReady(t, m)
			if got := m.Identity(); got != want {
				t.Errorf("%s: member %d: identity %+v, want the derived %+v", when, i, got, want)
			}
			if n := m.core.node.HistoryNaming(); n != raftlog.NamingNone {
				t.Errorf("%s: member %d: naming %q, want none", when, i, n)
			}
			if name := m.core.sm.Current().History; name != (metadata.HistoryName{}) {
				t.Errorf("%s: member %d applied a history name %+v: a cluster begun before history names never proposes one", when, i, name)
			}
		}
	}
	execOK(t, c.members[leader], Request{Statements: shopDDL})
	c.waitSameSchema()
	check("at start")
	// Upgrade each member in turn: restarted without the legacy setting,
	// it still finds no naming in its data dir.
	for i := range c.members {
		cfg := c.members[i].core.cfg
		cfg.legacyHistory = false
		if err := c.members[i].Close(); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", cfg.PeerAddr)
		if err != nil {
			t.Fatal(err)
		}
		cfg.peerListener = l
		m, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		c.members[i] = m
		c.waitLeader(0, 1, 2)
	}
	execOK(t, c.members[c.waitLeader(0, 1, 2)], Request{Statements: "CREATE TABLE shop.upgraded (id int PRIMARY KEY)"})
	c.waitSameSchema()
	check("after every member restarted")
}
