package raftlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/metalog/metalog/internal/testkit"
	"github.com/metalog/metalog/raftlog/faults"
)

// gnode is one member of a gcluster: its own listener, gRPC server,
// Transport and Node.
type gnode struct {
	id     uint64
	addr   string
	dir    string
	lis    net.Listener
	srv    *grpc.Server
	served chan struct{} // closed when Serve returned
	tr     *Transport
	node   *Node
	app    *recorder
}

// gcluster runs nodes in one process talking real gRPC over loopback.
type gcluster struct {
	t      testing.TB
	faults *faults.Injector
	// trMod, if not nil, adjusts each transport's config (set it before
	// listen).
	trMod func(id uint64, cfg *TransportConfig)
	mu    sync.Mutex // guards nodes (OnConfChange reads addresses)
	nodes map[uint64]*gnode
}

func newGRPCCluster(t testing.TB) *gcluster {
	c := &gcluster{t: t, faults: &faults.Injector{}, nodes: map[uint64]*gnode{}}
	t.Cleanup(c.stop)
	return c
}

// startGRPCCluster bootstraps a cluster of ids.
func startGRPCCluster(t testing.TB, ids ...uint64) *gcluster {
	t.Helper()
	c := newGRPCCluster(t)
	for _, id := range ids {
		c.listen(id)
	}
	var ps []Peer
	for _, id := range ids {
		ps = append(ps, Peer{ID: id, Context: []byte(c.node(id).addr)})
	}
	for _, id := range ids {
		c.start(id, func(cfg *Config) { cfg.Peers = ps })
	}
	return c
}

func (c *gcluster) node(id uint64) *gnode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id]
}

// listen opens id's listener and serves its peer service.
func (c *gcluster) listen(id uint64) *gnode {
	c.t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	return c.serve(id, lis, c.t.TempDir())
}

// listenPeers listens for each of ids and returns them as the Peers of
// a new cluster, each with its address as its context.
func (c *gcluster) listenPeers(ids ...uint64) []Peer {
	ps := make([]Peer, 0, len(ids))
	for _, id := range ids {
		ps = append(ps, Peer{ID: id, Context: []byte(c.listen(id).addr)})
	}
	return ps
}

// serve serves id's peer service on lis, with its data in dir.
func (c *gcluster) serve(id uint64, lis net.Listener, dir string) *gnode {
	g := &gnode{id: id, addr: lis.Addr().String(), dir: dir, lis: lis, served: make(chan struct{})}
	tc := TransportConfig{ID: id, Faults: c.faults, Logger: testLogger(), Dir: dir}
	if c.trMod != nil {
		c.trMod(id, &tc)
	}
	g.tr = NewTransport(tc)
	g.srv = grpc.NewServer()
	g.tr.Register(g.srv)
	go func() {
		defer close(g.served)
		_ = g.srv.Serve(g.tr.Listen(lis))
	}()
	c.mu.Lock()
	c.nodes[id] = g
	c.mu.Unlock()
	return g
}

// start starts id's Node (listen must have been called); mod adjusts its
// Config. Every member known to the node, and every node of the cluster
// for a joiner, becomes a transport peer.
func (c *gcluster) start(id uint64, mod func(*Config)) *gnode {
	c.t.Helper()
	g := c.node(id)
	g.app = &recorder{}
	cfg := Config{
		ID:           id,
		Dir:          g.dir,
		Applier:      g.app,
		Transport:    g.tr,
		TickInterval: testTick,
		OnConfChange: func(cc ConfChangeApplied) {
			if cc.Type == raftpb.ConfChangeRemoveNode {
				g.tr.RemovePeer(cc.ID)
				return
			}
			if err := g.tr.AddPeer(cc.ID, string(cc.Context)); err != nil {
				panic(err)
			}
		},
		OnMembersRestored: func(ms []Peer) {
			for _, m := range ms {
				if err := g.tr.AddPeer(m.ID, string(m.Context)); err != nil {
					panic(err)
				}
			}
		},
	}
	cfg.Logger = testLogger()
	mod(&cfg)
	n, err := Start(cfg)
	if err != nil {
		c.t.Fatalf("Start node %d: %v", id, err)
	}
	g.node = n
	g.tr.SetNode(n)
	for _, m := range n.Members() {
		if err := g.tr.AddPeer(m.ID, string(m.Context)); err != nil {
			c.t.Fatal(err)
		}
	}
	if cfg.Join {
		c.mu.Lock()
		for _, o := range c.nodes {
			if err := g.tr.AddPeer(o.id, o.addr); err != nil {
				c.t.Fatal(err)
			}
		}
		c.mu.Unlock()
	}
	return g
}

// testLogger logs to stderr when RAFTLOG_TEST_LOG is set, else discards.
func testLogger() *slog.Logger {
	if os.Getenv("RAFTLOG_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (c *gcluster) stopNode(g *gnode) {
	if g.node != nil {
		g.node.Stop()
	}
	g.tr.Stop()
	g.srv.Stop()
	<-g.served
}

func (c *gcluster) stop() {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = nil
	c.mu.Unlock()
	for _, g := range nodes {
		c.stopNode(g)
	}
}

func (c *gcluster) waitLeader(ids ...uint64) uint64 {
	c.t.Helper()
	return testkit.WaitLeader(c.t, ids, func(id uint64) (uint64, bool) { return c.node(id).node.Status().Leader, true })
}

func (c *gcluster) waitApplied(count int, ids ...uint64) {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("%d entries applied on %v", count, ids), func() bool {
		for _, id := range ids {
			if c.node(id).app.count() < count {
				return false
			}
		}
		return true
	})
}

func (c *gcluster) checkSame(ids ...uint64) {
	c.t.Helper()
	// Retried proposals may have added entries past the count waited for,
	// still on their way to some nodes: compare once all have as many.
	waitFor(c.t, fmt.Sprintf("as many entries applied on %v", ids), func() bool {
		n := c.node(ids[0]).app.count()
		for _, id := range ids[1:] {
			if c.node(id).app.count() != n {
				return false
			}
		}
		return true
	})
	want := c.node(ids[0]).app.seen()
	for _, id := range ids[1:] {
		got := c.node(id).app.seen()
		if !entriesSame(want, got) {
			c.t.Errorf("node %d applied %d entries differently from node %d (%d entries)", id, len(got), ids[0], len(want))
		}
	}
}

func entriesSame(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Index != b[i].Index || a[i].Term != b[i].Term || string(a[i].Data) != string(b[i].Data) {
			return false
		}
	}
	return true
}

// indexOf parses the index out of a recorder result "<payload>@<index>".
func indexOf(t testing.TB, v any) uint64 {
	t.Helper()
	s, _ := v.(string)
	i, err := strconv.ParseUint(s[strings.LastIndexByte(s, '@')+1:], 10, 64)
	if err != nil {
		t.Fatalf("result %v has no index", v)
	}
	return i
}

// proposeMany proposes (at least) count entries from workers goroutines on the nodes
// in on, round robin.
func proposeMany(t testing.TB, ctx context.Context, prefix string, count, workers int, on ...*Node) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	per := count / workers
	for w := range workers {
		n := on[w%len(on)]
		wg.Go(func() {
			for i := range per {
				// Raft loses a proposal forwarded while leadership changes
				// (a loaded test machine can make CheckQuorum step a leader
				// down); Propose notices through ctx or ErrLeaderChanged,
				// so retry. A retried entry may be applied twice, on every
				// node alike.
				for {
					pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					_, err := n.Propose(pctx, fmt.Appendf(nil, "%s-%d-%d", prefix, w, i))
					cancel()
					if err == nil {
						break
					}
					if ctx.Err() != nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrLeaderChanged)) {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestGRPCThreeNodes replicates proposals made on every node over real
// loopback gRPC, partitions the leader away, and heals.
func TestGRPCThreeNodes(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	for i := range 4 {
		for _, id := range all {
			if _, err := c.node(id).node.Propose(ctx, fmt.Appendf(nil, "n%d-%d", id, i)); err != nil {
				t.Fatalf("Propose on %d: %v", id, err)
			}
		}
	}
	c.waitApplied(12, all...)
	c.checkSame(all...)

	rest := without(all, leader)
	c.faults.Partition([]uint64{leader}, rest)
	newLeader := c.waitLeader(rest...)
	if newLeader == leader {
		t.Fatalf("partitioned node %d still leads %v", leader, rest)
	}
	for i := range 3 {
		for _, id := range rest {
			if _, err := c.node(id).node.Propose(ctx, fmt.Appendf(nil, "m%d-%d", id, i)); err != nil {
				t.Fatalf("Propose on %d in the majority: %v", id, err)
			}
		}
	}
	// The minority cannot commit, and says so within its deadline.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	start := time.Now()
	_, err := c.node(leader).node.Propose(short, []byte("lost"))
	cancel()
	if !errors.Is(err, ErrNoLeader) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrLeaderChanged) {
		t.Errorf("Propose in the minority: err = %v, want ErrNoLeader, DeadlineExceeded or ErrLeaderChanged", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Propose in the minority took %v", d)
	}
	short, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = c.node(leader).node.ReadIndex(short)
	cancel()
	if !errors.Is(err, ErrNoLeader) {
		t.Errorf("ReadIndex in the minority: err = %v, want ErrNoLeader", err)
	}
	c.waitApplied(18, rest...)

	c.faults.Heal()
	c.waitApplied(18, all...)
	c.waitLeader(all...)
	if _, err := c.node(leader).node.Propose(ctx, []byte("healed")); err != nil {
		t.Fatal(err)
	}
	c.waitApplied(19, all...)
	c.checkSame(all...)
	for _, e := range c.node(leader).app.seen() {
		if string(e.Data) == "lost" {
			t.Errorf("the minority's proposal was applied at %d", e.Index)
		}
	}
	if st := c.node(newLeader).tr.Stats(); st.Dropped != 0 {
		t.Logf("transport stats of %d: %+v", newLeader, st)
	}
}

// TestTransportUnreachablePeer counts failures towards a peer nobody
// listens on and stops cleanly, twice.
func TestTransportUnreachablePeer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	tr := NewTransport(TransportConfig{ID: 1, QueueSize: 2})
	if err := tr.AddPeer(2, addr); err != nil {
		t.Fatal(err)
	}
	if err := tr.AddPeer(1, "ignored:1"); err != nil {
		t.Fatal(err)
	}
	hb := func() []*raftpb.Message {
		return []*raftpb.Message{{Type: raftpb.MsgHeartbeat.Enum(), From: new(uint64(1)), To: new(uint64(2))}}
	}
	waitFor(t, "a send failure", func() bool {
		tr.Send(hb())
		return tr.Stats().SendFailures > 0
	})
	// A full queue drops; an unknown peer drops.
	for range 10 {
		tr.Send(hb())
	}
	tr.Send([]*raftpb.Message{{Type: raftpb.MsgHeartbeat.Enum(), From: new(uint64(1)), To: new(uint64(9))}})
	if st := tr.Stats(); st.Dropped == 0 {
		t.Errorf("Stats() = %+v, want drops", st)
	}
	tr.RemovePeer(2)
	tr.RemovePeer(7)
	tr.Stop()
	tr.Stop()
	tr.Send(hb()) // after Stop: ignored
	if err := tr.AddPeer(3, addr); err != nil {
		t.Errorf("AddPeer after Stop: %v", err)
	}
}

func TestMarshalWithoutSnapshotData(t *testing.T) {
	m := &raftpb.Message{
		Type: raftpb.MsgSnap.Enum(), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(3)),
		Snapshot: &raftpb.Snapshot{Data: []byte("data"), Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(9)), Term: new(uint64(3))}},
	}
	b, err := marshalWithoutSnapshotData(m)
	if err != nil {
		t.Fatal(err)
	}
	got := &raftpb.Message{}
	if err := proto.Unmarshal(b, got); err != nil {
		t.Fatal(err)
	}
	want := proto.Clone(m).(*raftpb.Message)
	want.Snapshot.Data = nil
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if string(m.GetSnapshot().GetData()) != "data" {
		t.Error("the message was modified")
	}
}
