package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var errTestEncode = errors.New("test snapshotter: state too large")

// snapRecorder is a recorder that implements Snapshotter: its state is the
// list of entries it applied. Every snapshot carries pad filler bytes too,
// to make large ones.
type snapRecorder struct {
	*recorder
	pad        int
	failEncode atomic.Bool  // Capture's encode fails while set
	transient  atomic.Bool  // and fails with EMFILE (too many open files) while this is set too
	slowEncode atomic.Int64 // nanoseconds Capture's encode sleeps first

	mu       sync.Mutex // guards restored
	restored []uint64   // indexes given to Restore
}

func (s *snapRecorder) Capture(index uint64) func() ([]byte, error) {
	s.recorder.mu.Lock()
	// Apply only appends, and never beyond a capped slice: an immutable view.
	ents := s.recorder.entries[:len(s.recorder.entries):len(s.recorder.entries)]
	s.recorder.mu.Unlock()
	if len(ents) > 0 && ents[len(ents)-1].Index > index {
		panic(fmt.Sprintf("Capture(%d) after entry %d was applied", index, ents[len(ents)-1].Index))
	}
	fail, transient, pad, slow := s.failEncode.Load(), s.transient.Load(), s.pad, time.Duration(s.slowEncode.Load())
	return func() ([]byte, error) {
		time.Sleep(slow)
		if fail && transient {
			return nil, fmt.Errorf("test snapshotter: %w", syscall.EMFILE)
		}
		if fail {
			return nil, errTestEncode
		}
		b := binary.AppendUvarint(nil, index)
		b = binary.AppendUvarint(b, uint64(len(ents)))
		for _, e := range ents {
			b = binary.AppendUvarint(b, e.Index)
			b = binary.AppendUvarint(b, e.Term)
			b = binary.AppendUvarint(b, uint64(len(e.Data)))
			b = append(b, e.Data...)
		}
		b = binary.AppendUvarint(b, uint64(pad))
		return append(b, make([]byte, pad)...), nil
	}
}

func (s *snapRecorder) Restore(index uint64, data []byte) error {
	next := func() uint64 {
		v, n := binary.Uvarint(data)
		if n <= 0 {
			panic("snapRecorder: truncated snapshot")
		}
		data = data[n:]
		return v
	}
	if at := next(); at != index {
		return fmt.Errorf("snapshot captured at %d restored as %d", at, index)
	}
	ents := make([]Entry, next())
	for i := range ents {
		ents[i].Index, ents[i].Term = next(), next()
		n := next()
		ents[i].Data = slices.Clone(data[:n])
		data = data[n:]
	}
	if pad := next(); uint64(len(data)) != pad {
		return fmt.Errorf("snapshot padding: %d bytes, want %d", len(data), pad)
	}
	s.recorder.mu.Lock()
	s.recorder.entries = ents
	s.recorder.mu.Unlock()
	s.mu.Lock()
	s.restored = append(s.restored, index)
	s.mu.Unlock()
	return nil
}

func (s *snapRecorder) restores() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.restored)
}

// events collects SnapshotEvents.
type events struct {
	mu  sync.Mutex // guards evs
	evs []SnapshotEvent
}

func (e *events) add(ev SnapshotEvent) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) get() []SnapshotEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.evs)
}

func (e *events) good() int {
	n := 0
	for _, ev := range e.get() {
		if ev.Err == nil {
			n++
		}
	}
	return n
}

func snapFiles(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(dir, snapDirName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func startSnapSingle(t testing.TB, dir string, app *snapRecorder, applied uint64, evs *events) *Node {
	t.Helper()
	n, err := Start(Config{
		ID:                     1,
		Peers:                  []Peer{{ID: 1, Context: []byte("one")}},
		Dir:                    dir,
		Applier:                app,
		Applied:                applied,
		TickInterval:           testTick,
		SnapshotEntries:        100,
		SnapshotCatchUpEntries: 50,
		OnSnapshot:             evs.add,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(n.Stop)
	return n
}

// TestSnapshotAndCompaction applies 1,000 entries with a snapshot every 100:
// snapshots are stored, the log compacted behind them, old files removed,
// and a restart with nothing applied restores the snapshot and replays the
// tail to the same state.
func TestSnapshotAndCompaction(t *testing.T) {
	dir := t.TempDir()
	app := &snapRecorder{recorder: &recorder{}}
	evs := &events{}
	n := startSnapSingle(t, dir, app, 0, evs)
	waitReady(t, n)
	proposeMany(t, testContext(t), "e", 1000, 10, n)
	waitFor(t, "a snapshot with the log compacted behind it", func() bool {
		first, _ := n.storage.FirstIndex()
		si := n.storage.snapshotIndex()
		return si >= 900 && first-1 == si-50
	})
	for _, ev := range evs.get() {
		if ev.Err != nil || ev.Size == 0 || ev.Index == 0 {
			t.Errorf("snapshot event %+v", ev)
		}
	}
	if got := evs.good(); got < 2 {
		t.Errorf("%d snapshots taken, want several", got)
	}
	n.Stop()
	if files := snapFiles(t, dir); len(files) != snapFilesKept {
		t.Errorf("snapshot files %v, want the newest %d", files, snapFilesKept)
	}
	want := app.seen()
	if len(want) != 1000 {
		t.Fatalf("applied %d entries, want 1000", len(want))
	}

	// Applied 0 is behind the compacted log: restore, then replay.
	app2 := &snapRecorder{recorder: &recorder{}}
	n2 := startSnapSingle(t, dir, app2, 0, &events{})
	waitReady(t, n2)
	if r := app2.restores(); len(r) != 1 || r[0] < 900 {
		t.Errorf("restores at start = %v, want one at the newest snapshot", r)
	}
	if diff := cmp.Diff(want, app2.seen()); diff != "" {
		t.Fatalf("state after restore and replay (-want +got):\n%s", diff)
	}
	if ms := n2.Members(); len(ms) != 1 || string(ms[0].Context) != "one" {
		t.Errorf("Members after restart = %+v", ms)
	}
	if _, err := n2.Propose(testContext(t), []byte("after")); err != nil {
		t.Fatal(err)
	}
	n2.Stop()

	// An Applier without Snapshotter cannot start behind the log.
	_, err := Start(Config{ID: 1, Dir: dir, Applier: &recorder{}})
	if !errors.Is(err, ErrAppliedCompacted) {
		t.Errorf("Start without Snapshotter: err = %v, want ErrAppliedCompacted", err)
	}
}

// TestSnapshotEncodeError: a failing encode is reported and compacts
// nothing; a later good snapshot works.
func TestSnapshotEncodeError(t *testing.T) {
	dir := t.TempDir()
	app := &snapRecorder{recorder: &recorder{}}
	app.failEncode.Store(true)
	evs := &events{}
	n := startSnapSingle(t, dir, app, 0, evs)
	waitReady(t, n)
	proposeMany(t, testContext(t), "a", 250, 5, n)
	waitFor(t, "a failed snapshot", func() bool { return len(evs.get()) > 0 })
	for _, ev := range evs.get() {
		if !errors.Is(ev.Err, errTestEncode) {
			t.Errorf("event %+v, want errTestEncode", ev)
		}
	}
	if first, _ := n.storage.FirstIndex(); first != 1 {
		t.Errorf("FirstIndex = %d after failed snapshots, want 1 (nothing compacted)", first)
	}
	if si := n.storage.snapshotIndex(); si != 0 {
		t.Errorf("stored snapshot at %d after failures", si)
	}
	if files := snapFiles(t, dir); len(files) != 0 {
		t.Errorf("snapshot files %v after failures", files)
	}

	app.failEncode.Store(false)
	proposeMany(t, testContext(t), "b", 150, 5, n)
	waitFor(t, "a good snapshot", func() bool { return evs.good() > 0 })
	waitFor(t, "the log compacted", func() bool {
		first, _ := n.storage.FirstIndex()
		return first > 1
	})
}

// TestSnapshotRetriedAfterTransientFailure: a snapshot that failed for
// want of file descriptors is tried again by itself, with no entry applied
// since, and stored once descriptors are back; one that failed for
// another reason waits for the schedule (TestSnapshotEncodeError).
func TestSnapshotRetriedAfterTransientFailure(t *testing.T) {
	dir := t.TempDir()
	app := &snapRecorder{recorder: &recorder{}}
	app.failEncode.Store(true)
	app.transient.Store(true)
	evs := &events{}
	n := startSnapSingle(t, dir, app, 0, evs)
	waitReady(t, n)
	proposeMany(t, testContext(t), "a", 120, 5, n)
	waitFor(t, "a failed snapshot", func() bool { return len(evs.get()) > 0 })
	if ev := evs.get()[0]; !errors.Is(ev.Err, syscall.EMFILE) {
		t.Fatalf("event %+v, want EMFILE", ev)
	}
	// Descriptors are back; nothing more is proposed.
	app.failEncode.Store(false)
	waitFor(t, "the snapshot tried again and stored", func() bool { return evs.good() > 0 })
	if si := n.storage.snapshotIndex(); si < 100 {
		t.Errorf("stored snapshot at %d, want the failed one's index or later", si)
	}
}

// TestSnapshotFileCorrupt: a damaged snapshot file stops Start with an
// error naming it.
func TestSnapshotFileCorrupt(t *testing.T) {
	dir := t.TempDir()
	app := &snapRecorder{recorder: &recorder{}}
	evs := &events{}
	n := startSnapSingle(t, dir, app, 0, evs)
	proposeMany(t, testContext(t), "e", 150, 5, n)
	waitFor(t, "a snapshot", func() bool { return evs.good() > 0 })
	n.Stop()
	files := snapFiles(t, dir)
	path := filepath.Join(dir, snapDirName, files[len(files)-1])
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Start(Config{ID: 1, Dir: dir, Applier: &snapRecorder{recorder: &recorder{}}})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "checksum") || !errors.Is(err, ErrBadSnapshotFile) || !errors.Is(err, ErrDamaged) {
		t.Errorf("Start with a corrupt snapshot file: err = %v, want ErrBadSnapshotFile and ErrDamaged naming %s", err, path)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = Start(Config{ID: 1, Dir: dir, Applier: &snapRecorder{recorder: &recorder{}}})
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) || !errors.Is(err, ErrBadSnapshotFile) {
		t.Errorf("Start with a missing snapshot file: err = %v, want ErrBadSnapshotFile naming %s", err, path)
	}
}

// TestFollowerCatchesUpBySnapshot isolates a follower while the leader
// snapshots and compacts past it; healed, it installs a snapshot and ends
// with the same state and membership.
func TestFollowerCatchesUpBySnapshot(t *testing.T) {
	all := []uint64{1, 2, 3}
	snaps := map[uint64]*snapRecorder{}
	restored := map[uint64]*atomic.Pointer[[]Peer]{}
	c := startClusterWith(t, func(id uint64, cfg *Config, app *recorder) {
		s := &snapRecorder{recorder: app}
		snaps[id] = s
		cfg.Applier = s
		for i := range cfg.Peers {
			cfg.Peers[i].Context = fmt.Appendf(nil, "ctx-%d", cfg.Peers[i].ID)
		}
		cfg.SnapshotEntries, cfg.SnapshotCatchUpEntries = 100, 20
		p := &atomic.Pointer[[]Peer]{}
		restored[id] = p
		cfg.OnMembersRestored = func(ms []Peer) { p.Store(&ms) }
	}, all...)
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 20, 2, c.nodes[leader])
	c.waitApplied(20, all...)

	c.net.isolate(follower, true)
	rest := without(all, follower)
	proposeMany(t, ctx, "cut", 400, 8, c.nodes[leader])
	behind := c.nodes[follower].Status().Applied
	waitFor(t, "the leader's log compacted past the follower", func() bool {
		first, _ := c.nodes[c.waitLeader(rest...)].storage.FirstIndex()
		return first > behind+1
	})
	c.net.isolate(follower, false)
	c.waitApplied(420, all...)
	if r := snaps[follower].restores(); len(r) == 0 {
		t.Errorf("follower %d caught up without a snapshot", follower)
	}
	if p := restored[follower].Load(); p == nil || len(*p) != 3 {
		t.Errorf("OnMembersRestored on the follower: %v", p)
	}
	c.checkSame(all...)
	want := c.nodes[leader].Members()
	for _, id := range all {
		got := c.nodes[id].Members()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("node %d Members (-leader +node):\n%s", id, diff)
		}
	}
	if string(want[0].Context) != "ctx-1" {
		t.Errorf("members %+v lost their contexts", want)
	}
}

// TestFollowerCatchesUpBySnapshotAfterRestart: the members that compacted
// their logs past an isolated follower restart (no snapshot data survives
// in memory) before it comes back; it still catches up by a snapshot, which
// the leader reads back from its file.
func TestFollowerCatchesUpBySnapshotAfterRestart(t *testing.T) {
	all := []uint64{1, 2, 3}
	snaps := map[uint64]*snapRecorder{}
	c := startClusterWith(t, func(id uint64, cfg *Config, app *recorder) {
		s := &snapRecorder{recorder: app}
		snaps[id] = s
		cfg.Applier = s
		cfg.SnapshotEntries, cfg.SnapshotCatchUpEntries = 100, 20
	}, all...)
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	rest := without(all, follower)
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 20, 2, c.nodes[leader])
	c.waitApplied(20, all...)

	c.net.isolate(follower, true)
	proposeMany(t, ctx, "cut", 400, 8, c.nodes[leader])
	behind := c.nodes[follower].Status().Applied
	c.waitApplied(420, rest...)
	waitFor(t, "the others' logs compacted past the follower", func() bool {
		for _, id := range rest {
			if first, _ := c.nodes[id].storage.FirstIndex(); first <= behind+1 {
				return false
			}
		}
		return true
	})
	for _, id := range rest {
		c.restart(id)
	}
	c.waitApplied(420, rest...)
	c.net.isolate(follower, false)
	c.waitLeader(all...)
	c.waitApplied(420, all...)
	if r := snaps[follower].restores(); len(r) == 0 {
		t.Errorf("follower %d caught up without a snapshot", follower)
	}
	c.checkSame(all...)
}

// grpcSnapCluster starts a gRPC cluster whose Appliers are snapRecorders
// with pad bytes of filler per snapshot.
func grpcSnapCluster(t *testing.T, pad int, mod func(*Config), trMod func(uint64, *TransportConfig), ids ...uint64) (*gcluster, map[uint64]*snapRecorder) {
	t.Helper()
	c := newGRPCCluster(t)
	c.trMod = trMod
	for _, id := range ids {
		c.listen(id)
	}
	var ps []Peer
	for _, id := range ids {
		ps = append(ps, Peer{ID: id, Context: []byte(c.node(id).addr)})
	}
	snaps := map[uint64]*snapRecorder{}
	for _, id := range ids {
		c.start(id, snapConfig(pad, snaps, id, func(cfg *Config) {
			cfg.Peers = ps
			if mod != nil {
				mod(cfg)
			}
		}))
	}
	return c, snaps
}

func snapConfig(pad int, snaps map[uint64]*snapRecorder, id uint64, mod func(*Config)) func(*Config) {
	return func(cfg *Config) {
		s := &snapRecorder{recorder: cfg.Applier.(*recorder), pad: pad}
		snaps[id] = s
		cfg.Applier = s
		cfg.SnapshotEntries, cfg.SnapshotCatchUpEntries = 100, 10
		// Storing a large snapshot holds the loop up (fsync): a longer
		// election timeout keeps a loaded test machine from electing.
		cfg.ElectionTicks = 40
		mod(cfg)
	}
}

type transferLog struct {
	mu   sync.Mutex // guards recv
	recv []error
	size []int
}

func (l *transferLog) add(bytes int, _ time.Duration, err error) {
	l.mu.Lock()
	l.recv = append(l.recv, err)
	l.size = append(l.size, bytes)
	l.mu.Unlock()
}

func (l *transferLog) get() ([]int, []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.size), slices.Clone(l.recv)
}

// catchUpBySnapshot partitions follower away, proposes until the leader's
// log is compacted past it, heals (then calls healed, if not nil), and
// waits until it caught up.
func catchUpBySnapshot(t *testing.T, c *gcluster, all []uint64, follower uint64, healed func()) {
	t.Helper()
	ctx := testContext(t)
	rest := without(all, follower)
	c.faults.Partition([]uint64{follower}, rest)
	proposeMany(t, ctx, "cut", 250, 5, c.node(rest[0]).node)
	behind := c.node(follower).node.Status().Applied
	waitFor(t, "the leaders' logs compacted past the follower", func() bool {
		for _, id := range rest {
			if first, _ := c.node(id).node.storage.FirstIndex(); first <= behind+1 {
				return false
			}
		}
		return true
	})
	c.faults.Heal()
	if healed != nil {
		healed()
	}
	c.waitApplied(c.node(rest[0]).app.count(), all...)
}

// TestGRPCLargeSnapshot sends a snapshot of more than 10 MiB, beyond gRPC's
// default 4 MiB message limit, in chunks over loopback gRPC; the follower
// restores it.
func TestGRPCLargeSnapshot(t *testing.T) {
	all := []uint64{1, 2, 3}
	recv := map[uint64]*transferLog{1: {}, 2: {}, 3: {}}
	c, snaps := grpcSnapCluster(t, 10<<20, nil, func(id uint64, tc *TransportConfig) {
		tc.OnSnapshotReceived = recv[id].add
	}, all...)
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	catchUpBySnapshot(t, c, all, follower, nil)
	if r := snaps[follower].restores(); len(r) == 0 {
		t.Fatalf("follower %d caught up without a snapshot", follower)
	}
	sizes, errs := recv[follower].get()
	ok := false
	for i, err := range errs {
		if err == nil && sizes[i] > 10<<20 {
			ok = true
		}
	}
	if !ok {
		t.Errorf("follower received %v (errors %v), want a snapshot of more than 10 MiB", sizes, errs)
	}
	var sent, sentBytes uint64
	for _, id := range without(all, follower) {
		tr := c.node(id).tr
		sent += tr.snapSent.Load()
		sentBytes += tr.snapSentBytes.Load()
	}
	if sent == 0 || sentBytes < 10<<20 {
		t.Errorf("snapshot sends of the others: %d sent, %d bytes", sent, sentBytes)
	}
	c.checkSame(all...)
}

// TestGRPCSnapshotCorruptChunk: a chunk corrupted in transit fails the
// receiver's checksum, the send is reported as failed, and raft's retry
// succeeds.
func TestGRPCSnapshotCorruptChunk(t *testing.T) {
	all := []uint64{1, 2, 3}
	recv := map[uint64]*transferLog{1: {}, 2: {}, 3: {}}
	c, snaps := grpcSnapCluster(t, 300<<10, nil, func(id uint64, tc *TransportConfig) {
		tc.SnapshotChunkSize = 64 << 10
		tc.OnSnapshotReceived = recv[id].add
	}, all...)
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	catchUpBySnapshot(t, c, all, follower, func() { c.faults.CorruptSnapshots(follower, 1) })
	if r := snaps[follower].restores(); len(r) == 0 {
		t.Fatalf("follower %d caught up without a snapshot", follower)
	}
	_, errs := recv[follower].get()
	if len(errs) < 2 || status.Code(errs[0]) != codes.DataLoss || !slices.Contains(errs[1:], nil) {
		t.Errorf("receive results %v, want a DataLoss (checksum) then a success", errs)
	}
	var failed uint64
	for _, id := range without(all, follower) {
		failed += c.node(id).tr.snapFailed.Load()
	}
	if failed == 0 {
		t.Error("no snapshot send counted as failed")
	}
	c.checkSame(all...)
}

// TestGRPCSnapshotSendLimit adds three brand-new learners to a compacted
// single-node log with MaxConcurrentSnapshotSends 1: each catches up by a
// snapshot, and never more than one is sent at a time.
func TestGRPCSnapshotSendLimit(t *testing.T) {
	c, snaps := grpcSnapCluster(t, 256<<10, nil, func(id uint64, tc *TransportConfig) {
		tc.MaxConcurrentSnapshotSends = 1
	}, 1)
	n1 := c.node(1).node
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 300, 5, n1)
	waitFor(t, "the log compacted", func() bool {
		first, _ := n1.storage.FirstIndex()
		return first > 1
	})
	learners := []uint64{2, 3, 4}
	for _, id := range learners {
		g := c.listen(id)
		// Slow sends overlap, so the limit has work to do.
		c.faults.Delay(id, 30*time.Millisecond)
		c.start(id, snapConfig(0, snaps, id, func(cfg *Config) { cfg.Join = true }))
		if err := n1.AddLearner(ctx, id, []byte(g.addr)); err != nil {
			t.Fatalf("AddLearner(%d): %v", id, err)
		}
	}
	all := []uint64{1, 2, 3, 4}
	waitFor(t, "every learner caught up and promoted", func() bool {
		for _, id := range all {
			if c.node(id).app.count() < 300 || len(peerIDs(c.node(id).node.Members(), false)) != 4 {
				return false
			}
		}
		return true
	})
	c.faults.Heal()
	for _, id := range learners {
		if r := snaps[id].restores(); len(r) == 0 {
			t.Errorf("learner %d caught up without a snapshot", id)
		}
	}
	c.checkSame(all...)
	want := n1.Members()
	for _, id := range learners {
		if diff := cmp.Diff(want, c.node(id).node.Members()); diff != "" {
			t.Errorf("learner %d Members (-leader +learner):\n%s", id, diff)
		}
	}
	tr := c.node(1).tr
	if hw, sent, now := tr.snapMaxInFlight.Load(), tr.snapSent.Load(), tr.SnapshotStats().SendsInFlight; hw != 1 || sent < 3 || now != 0 {
		t.Errorf("snapshot sends: high-water mark %d, %d sent, %d in flight; want a high-water mark of 1, at least 3 sent, none in flight", hw, sent, now)
	}
}

// TestEnvelopeRoundTrip: a version 2 envelope carries the member contexts
// and the removed members, and every truncation of it is refused.
func TestEnvelopeRoundTrip(t *testing.T) {
	sm := snapMembers{
		contexts: map[uint64][]byte{1: []byte("a"), 7: nil, 300: []byte("ctx")},
		removed:  map[uint64]uint64{2: 9, 1 << 60: 1 << 40},
	}
	b := append(envelopeHeader(sm), "state"...)
	if b[len(envelopeMagic)] != 2 {
		t.Fatalf("envelope version %d, want 2", b[len(envelopeMagic)])
	}
	got, data, err := decodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "state" || len(got.contexts) != 3 || string(got.contexts[300]) != "ctx" || len(got.contexts[7]) != 0 ||
		!maps.Equal(got.removed, sm.removed) {
		t.Errorf("decode = %+v, %q", got, data)
	}
	for i := range len(b) - len("state") {
		if _, _, err := decodeEnvelope(b[:i]); err == nil {
			t.Errorf("decode of %d of %d bytes succeeded", i, len(b))
		}
	}
	b[len(envelopeMagic)] = 3
	if _, _, err := decodeEnvelope(b); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("decode of version 3: %v", err)
	}
}

// TestEnvelopeVersion1: an envelope of an earlier release (version 1, no
// removed members) still decodes, with no removed members.
func TestEnvelopeVersion1(t *testing.T) {
	// "RLSE", version 1, 2 members: id 1 context "a", id 300 context "ctx".
	b := []byte("RLSE\x01\x02\x01\x01a\xac\x02\x03ctxstate")
	got, data, err := decodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "state" || len(got.contexts) != 2 || string(got.contexts[1]) != "a" || string(got.contexts[300]) != "ctx" ||
		got.removed == nil || len(got.removed) != 0 {
		t.Errorf("decode of version 1 = %+v, %q", got, data)
	}
}

func TestPurgeSnapFiles(t *testing.T) {
	dir := t.TempDir()
	for _, idx := range []uint64{5, 10, 15, 20, 25} {
		if _, err := writeSnapFile(dir, 2, idx, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "recv-1.tmp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := purgeSnapFiles(dir, 20, true); err != nil {
		t.Fatal(err)
	}
	want := []string{snapFileName(2, 15), snapFileName(2, 20)}
	des, _ := os.ReadDir(dir)
	var got []string
	for _, de := range des {
		got = append(got, de.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("after purge: %v, want %v", got, want)
	}
	if term, index, ok := parseSnapFileName(want[1]); !ok || term != 2 || index != 20 {
		t.Errorf("parse %s = %d, %d, %v", want[1], term, index, ok)
	}
}

// TestGRPCJoinSendsOneSnapshot adds a learner to a cluster whose log is
// compacted: it catches up through one snapshot taken after its addition,
// not first through the stored one, which it would ignore (its ConfState
// does not list it), and then a second.
func TestGRPCJoinSendsOneSnapshot(t *testing.T) {
	all := []uint64{1, 2, 3}
	recv := &transferLog{}
	c, snaps := grpcSnapCluster(t, 1<<20, nil, func(id uint64, tc *TransportConfig) {
		if id == 4 {
			tc.OnSnapshotReceived = recv.add
		}
	}, all...)
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 250, 5, c.node(leader).node)
	waitFor(t, "the leader's log compacted", func() bool {
		first, _ := c.node(leader).node.storage.FirstIndex()
		return first > 1
	})

	// The snapshot the addition asks for takes a while: raft contacts the
	// new member, and wants to send it one, in the meantime.
	for _, id := range all {
		snaps[id].slowEncode.Store(int64(500 * time.Millisecond))
	}
	g4 := c.listen(4)
	c.start(4, snapConfig(1<<20, snaps, 4, func(cfg *Config) { cfg.Join = true }))
	if err := c.node(leader).node.AddLearner(ctx, 4, []byte(g4.addr)); err != nil {
		t.Fatalf("AddLearner: %v", err)
	}
	c.waitApplied(c.node(leader).app.count(), 1, 2, 3, 4)
	c.checkSame(1, 2, 3, 4)
	if sizes, errs := recv.get(); len(sizes) != 1 || errs[0] != nil {
		t.Errorf("the new member received %d snapshots (the first of %v bytes, error %v), want one", len(sizes), sizes[:min(1, len(sizes))], errs[:min(1, len(errs))])
	}
}

// TestSnapshotScheduleDue: below sizedSnapshotBytes a snapshot is due
// every SnapshotEntries entries; above, not before the log applied since
// holds as many bytes as the last snapshot.
func TestSnapshotScheduleDue(t *testing.T) {
	for _, c := range []struct {
		name                string
		applied             uint64
		lastBytes, logBytes int
		want                bool
	}{
		{"too few entries", 150, 0, 1 << 30, false},
		{"no snapshot yet", 200, 0, 0, true},
		{"small snapshot", 200, sizedSnapshotBytes - 1, 0, true},
		{"large snapshot, short log", 200, 4 << 20, 4<<20 - 1, false},
		{"large snapshot, log as large", 200, 4 << 20, 4 << 20, true},
		{"large snapshot, too few entries", 150, 4 << 20, 8 << 20, false},
	} {
		s := &snapScheduler{every: 100, tried: 100, lastBytes: c.lastBytes, logBytes: c.logBytes}
		if got := s.due(c.applied); got != c.want {
			t.Errorf("%s: due = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLargeSnapshotWaitsForTheLog: a node whose snapshots are larger than
// sizedSnapshotBytes takes the next one only once as many bytes of
// entries were applied after it, however many small entries come first.
func TestLargeSnapshotWaitsForTheLog(t *testing.T) {
	dir := t.TempDir()
	const pad = 2 * sizedSnapshotBytes
	app := &snapRecorder{recorder: &recorder{}, pad: pad}
	evs := &events{}
	n := startSnapSingle(t, dir, app, 0, evs)
	waitReady(t, n)
	ctx := testContext(t)
	proposeMany(t, ctx, "small", 400, 4, n)
	waitFor(t, "the first snapshot", func() bool { return evs.good() >= 1 })
	// Small entries, 300 past the first snapshot: three intervals of
	// SnapshotEntries, a few kilobytes of log.
	proposeMany(t, ctx, "more", 300, 4, n)
	if got := evs.good(); got != 1 {
		t.Fatalf("%d snapshots after small entries, want 1: %+v", got, evs.get())
	}
	big := make([]byte, 64<<10)
	if _, err := n.Propose(ctx, big); err != nil {
		t.Fatal(err)
	}
	seen := app.seen()
	first := seen[len(seen)-1].Index
	for range pad / len(big) {
		if _, err := n.Propose(ctx, big); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a second snapshot", func() bool { return evs.good() >= 2 })
	ev := evs.get()[1]
	if minIndex := first + uint64(pad/len(big)) - 1; ev.Index < minIndex {
		t.Fatalf("second snapshot at index %d, want at least %d (after %d bytes of entries)", ev.Index, minIndex, pad)
	}
}

// plainSnapshotter takes no snapshot and restores any.
type plainSnapshotter struct{}

func (plainSnapshotter) Capture(uint64) func() ([]byte, error) { return nil }
func (plainSnapshotter) Restore(uint64, []byte) error          { return nil }

// weighed is a Snapshotter whose snapshots stand for work bytes
// (SnapshotSizer), whatever their length.
type weighed struct {
	plainSnapshotter
	work int
}

func (w weighed) SnapshotWork([]byte) int { return w.work }

// TestSnapshotScheduleCountsTheWork: with a SnapshotSizer, the size the
// schedule remembers of a snapshot is the work it stands for, not its
// length; without one, its length.
func TestSnapshotScheduleCountsTheWork(t *testing.T) {
	md := &raftpb.SnapshotMetadata{Index: new(uint64(7)), Term: new(uint64(1))}
	data := []byte("a compressed snapshot")
	for _, c := range []struct {
		sn   Snapshotter
		want int
	}{
		{weighed{work: 5 << 20}, 5 << 20},
		{plainSnapshotter{}, len(data)},
	} {
		s := &snapScheduler{sn: c.sn}
		if err := s.restore(md, data); err != nil {
			t.Fatal(err)
		}
		if s.lastBytes != c.want {
			t.Errorf("%T: lastBytes %d, want %d", c.sn, s.lastBytes, c.want)
		}
	}
}
