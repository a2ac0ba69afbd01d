package member

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeDisk is a data dir's free space as a test sets it: the fault layer
// under the NOSPACE alarm's measurements.
type fakeDisk struct{ bytes atomic.Uint64 }

func newFakeDisk() *fakeDisk {
	d := &fakeDisk{}
	d.bytes.Store(1 << 30)
	return d
}

func (d *fakeDisk) free(string) (uint64, error) { return d.bytes.Load(), nil }

// startSpaceCluster starts three members, each on a fake disk with 1 GiB
// free and the default min_free_space_bytes, and a registry per member.
func startSpaceCluster(t *testing.T) (*testCluster, []*fakeDisk, []*prometheus.Registry) {
	disks := []*fakeDisk{newFakeDisk(), newFakeDisk(), newFakeDisk()}
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry(), prometheus.NewRegistry()}
	c := startTestClusterWith(t, 3, func(i int, cfg *Config) {
		cfg.freeSpace, cfg.Registerer = disks[i].free, regs[i]
	})
	return c, disks, regs
}

// alarmGauge is metalog_alarm{kind="nospace"} as reg exports it.
func alarmGauge(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "metalog_alarm" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "nospace" {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal(`metalog_alarm{kind="nospace"} is not exported`)
	return 0
}

// waitAlarm waits until member i's alarm is raised (or cleared).
func (c *testCluster) waitAlarm(i int, raised bool) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for (c.members[i].core.space.err() != nil) != raised {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: NOSPACE alarm raised=%v after 10s, want %v", c.members[i].Name(), !raised, raised)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoSpaceOnAFollower: a follower whose disk fills raises its alarm,
// refuses DDL with ResourceExhausted naming its data dir and free bytes,
// stops taking appends while the other two commit, still answers reads,
// shows the alarm in the cluster status, /readyz and the metric; once
// space is back the alarm clears by itself and the follower catches up.
func TestNoSpaceOnAFollower(t *testing.T) {
	c, disks, regs := startSpaceCluster(t)
	leader := c.waitLeader(0, 1, 2)
	f := (leader + 1) % 3
	if _, err := c.exec(leader, 10*time.Second, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	first, err := c.members[f].Writes().Execute(ctx, Request{Statements: "CREATE TABLE ks.r (id int PRIMARY KEY)", RequestID: "before-the-alarm"})
	if err != nil {
		t.Fatal(err)
	}
	before := c.waitSameSchema()

	disks[f].bytes.Store(1 << 20)
	out, err := c.exec(leader, 10*time.Second, "CREATE TABLE ks.a (id int PRIMARY KEY)")
	if err != nil {
		t.Fatalf("DDL through the leader while one follower has no space: %v", err)
	}
	c.waitAlarm(f, true)
	if got := c.members[f].core.sm.Current().Epoch; got != before {
		t.Errorf("the follower without space applied epoch %d, want it to stay at %d (no appends taken)", got, before)
	}

	_, err = c.exec(f, 5*time.Second, "CREATE TABLE ks.b (id int PRIMARY KEY)")
	if kinds(err) != "[ErrNoSpace]" {
		t.Fatalf("DDL through the follower without space: %v (%v), want ErrNoSpace only", err, kinds(err))
	}
	for _, want := range []string{"NOSPACE", c.members[f].core.cfg.DataDir, "1048576 bytes free", "min_free_space_bytes (67108864)", "nothing of this request was applied"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if again, err := c.members[f].Writes().Execute(ctx, Request{Statements: "CREATE TABLE ks.r (id int PRIMARY KEY)", RequestID: "before-the-alarm"}); err != nil || again.Epoch != first.Epoch {
		t.Errorf("retry of a request applied before the alarm: epoch %d, %v; want its first result, epoch %d", again.Epoch, err, first.Epoch)
	}
	if _, _, err := c.members[f].Writes().SetGuardrails(ctx, "test", "", map[string]string{"tables_warn_threshold": "5"}); !errors.Is(err, ErrNoSpace) {
		t.Errorf("guardrail change through the follower without space: %v, want ErrNoSpace", err)
	}
	md, err := c.members[f].Reads().Read(ctx, 0, Local, nil)
	if err != nil {
		t.Fatalf("local read on the follower without space: %v", err)
	}
	if _, ok := md.Schema.Keyspace("ks"); !ok {
		t.Errorf("local read on the follower without space: keyspace ks not found at epoch %d", md.Epoch)
	}
	if r := c.members[f].Readiness(); !r.Ready || !strings.Contains(r.Degraded, "no space") {
		t.Errorf("readiness of the follower without space: %+v, want ready and degraded: no space", r)
	}
	if g := alarmGauge(t, regs[f]); g != 1 {
		t.Errorf(`metalog_alarm{kind="nospace"} = %v on the follower without space, want 1`, g)
	}
	if g := alarmGauge(t, regs[leader]); g != 0 {
		t.Errorf(`metalog_alarm{kind="nospace"} = %v on the leader, want 0`, g)
	}
	resp, err := c.members[leader].Cluster().ListMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, pm := range resp.Members {
		want := ""
		if pm.Name == c.members[f].Name() {
			want = "NOSPACE"
		}
		if got := strings.Join(pm.Alarms, ","); got != want {
			t.Errorf("cluster status: %s's alarms %q, want %q", pm.Name, got, want)
		}
	}

	disks[f].bytes.Store(1 << 30)
	c.waitAlarm(f, false)
	if got := c.waitSameSchema(); got < out.Epoch {
		t.Fatalf("members agree on epoch %d, before the DDL at %d", got, out.Epoch)
	}
	if _, err := c.exec(f, 10*time.Second, "CREATE TABLE ks.b (id int PRIMARY KEY)"); err != nil {
		t.Fatalf("DDL through the follower once space is back: %v", err)
	}
	if r := c.members[f].Readiness(); r.Degraded != "" || alarmGauge(t, regs[f]) != 0 {
		t.Errorf("after the alarm cleared: degraded %q, metalog_alarm %v; want neither", r.Degraded, alarmGauge(t, regs[f]))
	}
}

// TestNoSpaceOnTheLeaderHandsItOff: a leader whose disk fills refuses DDL
// and hands the leadership to a member with space, so the cluster takes
// DDL again through the others.
func TestNoSpaceOnTheLeaderHandsItOff(t *testing.T) {
	c, disks, _ := startSpaceCluster(t)
	old := c.waitLeader(0, 1, 2)
	disks[old].bytes.Store(0)
	c.waitAlarm(old, true)
	if _, err := c.exec(old, 5*time.Second, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("DDL through the leader without space: %v, want ErrNoSpace", err)
	}
	others := []int{(old + 1) % 3, (old + 2) % 3}
	next := c.waitLeader(others...)
	if _, err := c.exec(others[0], 10*time.Second, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatalf("DDL through %s once %s leads: %v", c.members[others[0]].Name(), c.members[next].Name(), err)
	}
	if got := c.members[old].core.node.Status().Leader; got == c.ids[old] {
		t.Errorf("%s still leads without space", c.members[old].Name())
	}
	disks[old].bytes.Store(1 << 30)
	c.waitAlarm(old, false)
	c.waitSameSchema()
}

// TestNoSpaceFromAFailedWrite: a write that fails with ENOSPC raises the
// alarm even when statfs shows room (a quota, a race), and the alarm stays
// one check interval before a check with room clears it; other write
// errors do not raise it.
func TestNoSpaceFromAFailedWrite(t *testing.T) {
	d := newFakeDisk()
	a := newSpaceAlarm("/data", 64<<20, d.free, slog.New(slog.DiscardHandler))
	if a.failedWrite("schema store write", errors.New("disk on fire")) || a.err() != nil {
		t.Fatal("a write error other than ENOSPC raised the alarm")
	}
	if !a.failedWrite("schema store write", fmt.Errorf("write schema.db: %w", syscall.ENOSPC)) {
		t.Fatal("ENOSPC did not raise the alarm")
	}
	err := a.check()
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "schema store write failed: write schema.db: no space left on device") {
		t.Fatalf("check right after ENOSPC: %v, want the alarm naming the failed write", err)
	}
	a.mu.Lock()
	a.enospc = time.Now().Add(-spaceCheckInterval)
	a.mu.Unlock()
	if err := a.check(); err != nil {
		t.Fatalf("check with room one interval after ENOSPC: %v, want the alarm cleared", err)
	}
	if got := a.alarms(); len(got) != 0 {
		t.Fatalf("alarms %q after clearing", got)
	}
}
