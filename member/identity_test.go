package member

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestHistoryIDOfClusters: the history id is made from the cluster id
// alone, the same every time, different for different clusters, never 0
// (a cluster without id has one too), and differs from the cluster id;
// ParseHistoryID reads what FormatHistoryID writes and refuses the rest.
func TestHistoryIDOfClusters(t *testing.T) {
	seen := map[uint64]uint64{}
	for _, cluster := range []uint64{0, 1, 2, 0xdeadbeef, 1 << 63} {
		h := HistoryID(cluster)
		if h == 0 || h == cluster || HistoryID(cluster) != h {
			t.Errorf("HistoryID(%x) = %x: want a fixed id, not 0 nor the cluster id", cluster, h)
		}
		if other, dup := seen[h]; dup {
			t.Errorf("clusters %x and %x share history id %x", other, cluster, h)
		}
		seen[h] = cluster
		if got, err := ParseHistoryID(FormatHistoryID(h)); err != nil || got != h {
			t.Errorf("ParseHistoryID(FormatHistoryID(%x)) = %x, %v", h, got, err)
		}
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
// cluster's; a watch or history read naming that history id is served,
// one naming another is refused with FailedPrecondition and an error
// naming both ids (errors.Is ErrHistoryChanged); naming none is not
// checked.
func TestWatchAndHistoryCheckTheHistoryID(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL})
	id := m.Identity()
	if id.ClusterID != m.ClusterID() || id.HistoryID != HistoryID(m.ClusterID()) {
		t.Fatalf("identity %+v of a member of cluster %x", id, m.ClusterID())
	}
	other := HistoryID(m.ClusterID() + 1)
	for _, hid := range []uint64{0, id.HistoryID} {
		if _, err := m.History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: hid}); err != nil {
			t.Errorf("history naming history id %x: %v", hid, err)
		}
		f := startFeed(t, m, WatchQuery{From: uptr(0), HistoryID: hid})
		if msg := f.next(t, false); msg.Type != WatchEvents || msg.Epoch != 1 {
			t.Errorf("watch naming history id %x: %+v, want the events of epoch 1", hid, msg)
		}
	}
	_, herr := m.History(testContext(t), HistoryQuery{From: uptr(0), HistoryID: other})
	werr := m.Watch(testContext(t), WatchQuery{From: uptr(0), HistoryID: other}, func(WatchMessage) error {
		t.Error("a watch of another history sent a message")
		return nil
	})
	for op, err := range map[string]error{"history": herr, "watch": werr} {
		var hc *HistoryChangedError
		if !errors.Is(err, ErrHistoryChanged) || !errors.As(err, &hc) || Code(err) != codes.FailedPrecondition {
			t.Fatalf("%s of another history: %v (%v), want FailedPrecondition matching ErrHistoryChanged", op, err, Code(err))
		}
		if hc.Requested != other || hc.Identity != id ||
			!strings.HasPrefix(err.Error(), op+": history id "+FormatHistoryID(other)+" is not this cluster's") ||
			!strings.Contains(err.Error(), "history "+FormatHistoryID(id.HistoryID)) {
			t.Errorf("%s of another history: %v, want both history ids named", op, err)
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
		cur := m.sm.Current().Epoch
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
	err := m.Watch(ctx, WatchQuery{From: uptr(99)}, func(msg WatchMessage) error {
		if msg.Epoch > 5 {
			t.Errorf("a watch from epoch 99 sent %s at epoch %d; the member is at 5", msg.Type, msg.Epoch)
		}
		return nil
	})
	if Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "watch from_epoch 99: this member (history ") ||
		!strings.Contains(err.Error(), "was still at epoch 5 when the request deadline passed") {
		t.Fatalf("a watch from epoch 99 past its deadline: %v (%v), want DeadlineExceeded naming both epochs", err, Code(err))
	}
}

// TestPlanRefusedNamesWhy: a plan that cannot be made, or that would be
// refused at a statement, is a *PlanRefusedError (FailedPrecondition,
// errors.Is ErrPlanRefused) naming the statement, with the cause behind
// it (errors.As).
func TestPlanRefusedNamesWhy(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, _, err := m.SetGuardrails(ctx, "test", "", map[string]string{"tables_warn_threshold": "1", "tables_fail_threshold": "1"}); err != nil {
		t.Fatal(err)
	}
	desired := shopDDL + "; CREATE TABLE shop.a (k int, c int, PRIMARY KEY (k, c)); CREATE TABLE shop.b (id int PRIMARY KEY)"
	_, err := m.Plan(ctx, PlanRequest{Desired: desired})
	var pe *PlanRefusedError
	if !errors.As(err, &pe) || !errors.Is(err, ErrPlanRefused) || Code(err) != codes.FailedPrecondition {
		t.Fatalf("a plan past tables_fail_threshold: %v (%v), want a *PlanRefusedError, FailedPrecondition", err, Code(err))
	}
	if pe.Position != 3 || !strings.HasPrefix(pe.Statement, "CREATE TABLE shop.b") ||
		!strings.HasPrefix(err.Error(), "the plan would be refused: statement 3 of 3: ") ||
		!strings.Contains(err.Error(), "tables_fail_threshold") {
		t.Errorf("a plan past tables_fail_threshold: %v (statement %d %q), want statement 3 and the guardrail named", err, pe.Position, pe.Statement)
	}
	if _, _, err := m.SetGuardrails(ctx, "test", "", map[string]string{"tables_fail_threshold": "-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Execute(ctx, Request{Statements: desired, Atomic: true}); err != nil {
		t.Fatal(err)
	}
	reordered := strings.Replace(desired, "PRIMARY KEY (k, c))", "PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)", 1)
	_, err = m.Plan(ctx, PlanRequest{Desired: reordered})
	if !errors.As(err, &pe) || pe.Statement != "" || Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "shop.a") {
		t.Errorf("a clustering order change: %v (%v), want a *PlanRefusedError without statement naming shop.a", err, Code(err))
	}
}
