package raftlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const (
	testTick    = 5 * time.Millisecond
	waitTimeout = 20 * time.Second
)

var errTestFail = errors.New("test applier: refused")

// recorder is a test Applier: it records every entry and answers
// "<payload>@<index>", or errTestFail for the payload "fail".
type recorder struct {
	mu      sync.Mutex // guards entries
	entries []Entry
	results []Result // reused, as a real Applier would
}

func (r *recorder) Apply(entries []Entry) []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = r.results[:0]
	for _, e := range entries {
		r.entries = append(r.entries, Entry{Index: e.Index, Term: e.Term, Data: slices.Clone(e.Data)})
		if string(e.Data) == "fail" {
			r.results = append(r.results, Result{Err: fmt.Errorf("entry %d: %w", e.Index, errTestFail)})
			continue
		}
		r.results = append(r.results, Result{Value: fmt.Sprintf("%s@%d", e.Data, e.Index)})
	}
	return r.results
}

func (r *recorder) seen() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.entries)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		<-tick.C
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// peers returns ids as Peers without contexts.
func peers(ids ...uint64) []Peer {
	out := make([]Peer, len(ids))
	for i, id := range ids {
		out[i] = Peer{ID: id}
	}
	return out
}

func startSingle(t testing.TB, dir string, app Applier, applied uint64) *Node {
	t.Helper()
	n, err := Start(Config{
		ID:           1,
		Peers:        peers(1),
		Dir:          dir,
		Applier:      app,
		Applied:      applied,
		TickInterval: testTick,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(n.Stop)
	return n
}

func waitReady(t testing.TB, n *Node) {
	t.Helper()
	select {
	case <-n.Ready():
	case <-time.After(waitTimeout):
		t.Fatalf("node %d not ready after %v: %+v", n.id, waitTimeout, n.Status())
	}
}

// network is an in-memory Sender between nodes of one process, with
// fault injection: messages from or to an isolated node are dropped, and
// so are those the filter, if set, drops. Each
// node has an inbox goroutine so Send never blocks the sender's loop. Like
// Transport, it reports every MsgSnap to its sender: finished once queued
// for the receiver, failed when dropped.
type network struct {
	mu       sync.Mutex // guards isolated, filter, inboxes and nodes
	isolated map[uint64]bool
	// filter, if set, is asked about every message when it is sent and
	// when it is delivered; true drops it.
	filter  func(m *raftpb.Message) bool
	inboxes map[uint64]*inbox
	nodes   map[uint64]*Node
	wg      sync.WaitGroup
	ctx     context.Context // canceled by close
	cancel  context.CancelFunc
}

type inbox struct {
	mu     sync.Mutex // guards queue
	queue  []*raftpb.Message
	signal chan struct{} // capacity 1
}

func newNetwork() *network {
	ctx, cancel := context.WithCancel(context.Background())
	return &network{isolated: map[uint64]bool{}, inboxes: map[uint64]*inbox{}, nodes: map[uint64]*Node{}, ctx: ctx, cancel: cancel}
}

// transport returns the Sender of node from.
func (nw *network) transport(from uint64) Sender {
	return transportFunc(func(msgs []*raftpb.Message) {
		for _, m := range msgs {
			nw.send(from, m)
		}
	})
}

type transportFunc func(msgs []*raftpb.Message)

func (f transportFunc) Send(msgs []*raftpb.Message) { f(msgs) }

func (nw *network) send(from uint64, m *raftpb.Message) {
	nw.mu.Lock()
	ib := nw.inboxes[m.GetTo()]
	drop := nw.isolated[from] || nw.isolated[m.GetTo()] || (nw.filter != nil && nw.filter(m))
	sender := nw.nodes[from]
	nw.mu.Unlock()
	if m.GetType() == raftpb.MsgSnap && sender != nil {
		status := raft.SnapshotFinish
		if ib == nil || drop {
			status = raft.SnapshotFailure
		}
		// ReportSnapshot may block, and send runs on the sender's loop.
		to := m.GetTo()
		nw.wg.Go(func() { sender.ReportSnapshot(to, status) })
	}
	if ib == nil || drop {
		return
	}
	// Clone, as a wire would: the receiver must not share the sender's
	// entries.
	m = proto.Clone(m).(*raftpb.Message)
	ib.mu.Lock()
	ib.queue = append(ib.queue, m)
	ib.mu.Unlock()
	select {
	case ib.signal <- struct{}{}:
	default:
	}
}

// attach starts delivering messages addressed to id to n.
func (nw *network) attach(id uint64, n *Node) {
	ib := &inbox{signal: make(chan struct{}, 1)}
	nw.mu.Lock()
	nw.inboxes[id] = ib
	nw.nodes[id] = n
	nw.mu.Unlock()
	nw.wg.Add(1)
	go func() {
		defer nw.wg.Done()
		ctx := nw.ctx
		for {
			select {
			case <-ib.signal:
			case <-ctx.Done():
				return
			}
			ib.mu.Lock()
			q := ib.queue
			ib.queue = nil
			ib.mu.Unlock()
			for _, m := range q {
				nw.mu.Lock()
				drop := nw.isolated[m.GetFrom()] || nw.isolated[id] || (nw.filter != nil && nw.filter(m))
				nw.mu.Unlock()
				if drop {
					continue
				}
				if err := n.Step(ctx, m); err != nil && !errors.Is(err, ErrStopped) && ctx.Err() == nil {
					panic(fmt.Sprintf("step to %d: %v", id, err))
				}
			}
		}
	}()
}

// setFilter makes f (nil: none) the network's filter.
func (nw *network) setFilter(f func(m *raftpb.Message) bool) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.filter = f
}

func (nw *network) isolate(id uint64, on bool) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.isolated[id] = on
}

func (nw *network) close() {
	nw.cancel()
	nw.wg.Wait()
}

// cluster is a set of nodes of one raft group on a network.
type cluster struct {
	t     testing.TB
	net   *network
	ids   []uint64
	mod   func(id uint64, cfg *Config, app *recorder)
	dirs  map[uint64]string
	nodes map[uint64]*Node
	apps  map[uint64]*recorder
}

func startCluster(t testing.TB, ids ...uint64) *cluster {
	t.Helper()
	return startClusterWith(t, nil, ids...)
}

// startClusterWith is startCluster with mod, if not nil, adjusting each
// node's Config (its Applier must stay, or wrap, the recorder it has).
func startClusterWith(t testing.TB, mod func(id uint64, cfg *Config, app *recorder), ids ...uint64) *cluster {
	t.Helper()
	c := &cluster{t: t, net: newNetwork(), ids: ids, mod: mod, dirs: map[uint64]string{}, nodes: map[uint64]*Node{}, apps: map[uint64]*recorder{}}
	for _, id := range ids {
		c.dirs[id] = t.TempDir()
		c.start(id)
	}
	t.Cleanup(c.stop)
	return c
}

// start starts node id on its data directory with a new recorder, the
// Config adjusted by the cluster's mod.
func (c *cluster) start(id uint64) {
	c.t.Helper()
	app := &recorder{}
	cfg := Config{
		ID:           id,
		Peers:        peers(c.ids...),
		Dir:          c.dirs[id],
		Applier:      app,
		Transport:    c.net.transport(id),
		TickInterval: testTick,
	}
	if c.mod != nil {
		c.mod(id, &cfg, app)
	}
	n, err := Start(cfg)
	if err != nil {
		c.t.Fatalf("Start node %d: %v", id, err)
	}
	c.nodes[id], c.apps[id] = n, app
	c.net.attach(id, n)
}

// restart stops node id and starts it again on its data directory, with
// nothing applied: it restores its stored snapshot and replays its log.
func (c *cluster) restart(id uint64) {
	c.t.Helper()
	c.nodes[id].Stop()
	c.start(id)
}

func (c *cluster) stop() {
	for _, n := range c.nodes {
		n.Stop()
	}
	c.net.close()
}

// waitLeader waits until every node in ids reports the same leader, itself
// one of ids, and returns it.
func (c *cluster) waitLeader(ids ...uint64) uint64 {
	c.t.Helper()
	return testkit.WaitLeader(c.t, ids, func(id uint64) (uint64, bool) { return c.nodes[id].Status().Leader, true })
}

// waitApplied waits until the appliers of ids have seen count entries each.
func (c *cluster) waitApplied(count int, ids ...uint64) {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("%d entries applied on %v", count, ids), func() bool {
		for _, id := range ids {
			if c.apps[id].count() < count {
				return false
			}
		}
		return true
	})
}
