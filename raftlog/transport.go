package raftlog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

const (
	defaultQueueSize = 4096
	// maxBatchBytes bounds the encoded messages of one Batch, well below
	// gRPC's default 4 MiB receive limit; a single larger message still
	// goes alone.
	maxBatchBytes = 2 << 20
	// Reconnect backoff of a peer's stream after a failure.
	minBackoff = 50 * time.Millisecond
	maxBackoff = 200 * time.Millisecond
	// snapshotTimeout bounds one SendSnapshot stream, from its opening to
	// the receiver's Ack.
	snapshotTimeout = 5 * time.Minute
	// Snapshot transfer defaults (TransportConfig).
	defaultSnapshotChunkSize          = 2 << 20
	defaultMaxConcurrentSnapshotSends = 2
	defaultSnapshotWaitTimeout        = 30 * time.Second
	// removeGrace bounds how long a removed peer's goroutine may take to
	// send what was queued for it before RemovePeer.
	removeGrace = 2 * time.Second
)

// TransportConfig configures a Transport. The zero value of every optional
// field means its default.
type TransportConfig struct {
	// ID is the raft id of the local node. Required, non-zero.
	ID uint64

	// Logger receives the transport's logs. Default discards.
	Logger *slog.Logger

	// QueueSize is the number of messages queued per peer before further
	// messages to it are dropped (raft retransmits). Default 4096.
	QueueSize int

	// DialOptions are used to connect to every peer. Nil means plaintext
	// (insecure credentials); a non-nil list must set the credentials
	// itself. The transport always adds a connection backoff of 50ms to 200ms
	// and a fixed flow-control window (see ServerOptions), which options given
	// here can override.
	DialOptions []grpc.DialOption

	// TLS, if not nil, secures the log streams this transport opens to its
	// peers (stream.go); ServerName defaults to the peer address's host.
	// It must match the credentials in DialOptions. ServerTLS, if not nil,
	// secures the log streams peers open to this transport (Listen). Both
	// nil means plaintext.
	TLS, ServerTLS *tls.Config

	// Faults, if not nil, drops, delays or corrupts messages (tests; see
	// package raftlog/faults). Several transports may share one.
	Faults Faults

	// SnapshotChunkSize is the size in bytes of the data pieces a snapshot
	// is sent in (the last may be smaller). Default 2 MiB; keep it well
	// below the receiving server's message limit (gRPC's default is 4 MiB,
	// so the peer server needs no MaxRecvMsgSize option by default).
	SnapshotChunkSize int

	// MaxConcurrentSnapshotSends bounds the snapshots this transport sends
	// at the same time, to all peers together. A send waits its turn for
	// at most SnapshotWaitTimeout and is then reported to raft as failed
	// (raft tries again later). Default 2.
	MaxConcurrentSnapshotSends int

	// SnapshotWaitTimeout bounds how long a snapshot send waits for its
	// turn under MaxConcurrentSnapshotSends. Default 30s.
	SnapshotWaitTimeout time.Duration

	// OnSnapshotSent, if not nil, is called after every snapshot send with
	// the data's size in bytes, how long the send took (waiting for a turn
	// included) and its error (nil when the receiver acknowledged it). It
	// runs on the sending goroutine and must not block for long.
	OnSnapshotSent func(bytes int, d time.Duration, err error)

	// HandshakeLog, if not nil, logs and remembers the TLS handshakes of
	// the log streams that fail, on both sides; the caller may share it
	// with the credentials of its peer gRPC server and DialOptions
	// (HandshakeLog.Credentials). Default: one of the transport's own,
	// logging to Logger.
	HandshakeLog *HandshakeLog

	// OnSnapshotReceived, if not nil, is called after every snapshot
	// received by this transport's gRPC service, with the bytes received,
	// the duration and the error (nil when the snapshot was checked and
	// handed to the node). It runs on the gRPC handler's goroutine.
	OnSnapshotReceived func(bytes int, d time.Duration, err error)

	// MaxEntryBytes is the largest log entry, in bytes, that this
	// member's peers propose, and the largest state snapshot (the
	// caller's max_mutation_size). What peers send is bounded by it
	// before anything is allocated for it: a message on a log stream at
	// most 2*MaxEntryBytes + 1 MiB (raft's default MaxSizePerMsg) + 64
	// KiB, a snapshot's data at most 2*MaxEntryBytes + 1 MiB (twice
	// leaves room for a peer whose limit is larger, up to double); larger
	// ones are refused. Default 16 MiB.
	MaxEntryBytes int64

	// Dir is the node's directory (Config.Dir): a snapshot being received
	// is written to a temporary file in its snap directory as it
	// arrives, and read back only once it is complete and checked. A
	// restart removes such files left behind. Default: the system's
	// temporary directory.
	Dir string

	// recvHook, if not nil, is called with the temporary file of a
	// snapshot being received and its size after each chunk written to
	// it (tests).
	recvHook func(path string, written int64)

	// Gate, if not nil, admits only members to the log streams and
	// snapshots this transport serves, and checks that the peers it dials
	// present a member's certificate (see PeerGate): NewTransport adds its
	// checks to TLS and ServerTLS. Nil trusts every peer the TLS
	// handshake, if any, accepts, each stream bound to the sender of its
	// first message.
	Gate *PeerGate
}

// Faults decides which network faults a Transport injects, for tests
// (package raftlog/faults has an implementation). Its methods are called
// from the transport's goroutines, several at a time, and from the node's
// goroutine (through Send): they must be safe for concurrent use and
// return at once.
type Faults interface {
	// Dropped reports whether a message from member from to member to is
	// lost. It is asked when sending, for every message, and when
	// receiving, for every message and snapshot.
	Dropped(from, to uint64) bool
	// DelayFor returns how long a batch of messages or a snapshot sent to
	// member to is held before it is sent; zero for none.
	DelayFor(to uint64) time.Duration
	// CorruptNextSnapshot reports whether the snapshot now being sent to
	// member to has one byte of one chunk flipped in transit (so that the
	// receiver's checksum fails). It is asked once per snapshot sent.
	CorruptNextSnapshot(to uint64) bool
}

// LocalNode is what a Transport needs of the node whose messages it
// carries; *Node implements it. Which goroutine calls what:
//
//   - Step: the goroutine serving one log stream or snapshot stream of a
//     peer; it may block until the node takes the message or ctx ends.
//   - ReportUnreachable: a peer's sender, and Send on the node's own
//     goroutine when a peer's queue is full; it must not block.
//   - ReportSnapshot: a goroutine of the snapshot send, never Send; it may
//     block until the node takes the report (raft sends the peer nothing
//     until it has it).
//   - PeerRemoved: the goroutine serving a log stream or a snapshot stream,
//     for every message received; it must be cheap and not block.
//   - ReportRemoved: the goroutine watching a log stream this transport
//     opened; it must not block.
//   - ClusterID: any goroutine; it must be cheap.
//   - ReportForeign: the goroutine serving a log stream or snapshot stream;
//     it must not block.
type LocalNode interface {
	// Step hands a message received from a peer to the node (Node.Step).
	Step(ctx context.Context, m *raftpb.Message) error
	// ReportUnreachable tells the node that the last send to member id
	// failed.
	ReportUnreachable(id uint64)
	// ReportSnapshot tells the node how sending a snapshot to member id
	// ended: raft.SnapshotFinish or raft.SnapshotFailure.
	ReportSnapshot(id uint64, status raft.SnapshotStatus)
	// PeerRemoved returns the index at which member id was removed from
	// the cluster (0: it was not), and whether this node leads: a message
	// from a removed member is answered with "you were removed from the
	// cluster" (streamRemoved) instead of being stepped.
	PeerRemoved(id uint64) (at uint64, leader bool)
	// ReportRemoved tells the node that member by says this node was
	// removed from the cluster at index at (0: unknown), and whether by
	// leads.
	ReportRemoved(by, at uint64, leader bool)
	// ClusterID is the id of the node's cluster, sent to peers and
	// compared with theirs; 0 checks nothing.
	ClusterID() uint64
	// ReportForeign stops the node with err (ErrClusterMismatch): a leader
	// of another cluster sends to it.
	ReportForeign(err error)
}

var _ LocalNode = (*Node)(nil)

// noFaults is the Faults of a transport configured without any.
type noFaults struct{}

func (noFaults) Dropped(from, to uint64) bool       { return false }
func (noFaults) DelayFor(to uint64) time.Duration   { return 0 }
func (noFaults) CorruptNextSnapshot(to uint64) bool { return false }

// TransportStats are cumulative counters of a Transport.
type TransportStats struct {
	// SendFailures counts failed stream opens, stream sends and snapshot
	// RPCs.
	SendFailures uint64
	// Reconnects counts streams opened to a peer after its first.
	Reconnects uint64
	// Dropped counts messages dropped because a peer's queue was full or
	// the peer was unknown.
	Dropped uint64
}

// SnapshotStats are the snapshot sends of a Transport.
type SnapshotStats struct {
	// SendsInFlight is the number of snapshots being sent now (holding one
	// of MaxConcurrentSnapshotSends turns).
	SendsInFlight int
}

// Transport is the network implementation of Sender: one long-lived log
// stream per peer (a TCP connection on the peer port, see stream.go), fed
// by a goroutine draining a bounded queue, and the serving side (Listen)
// that hands received messages to the local node (SetNode). MsgSnap travels by gRPC
// (Register), in chunks (SendSnapshot), at most MaxConcurrentSnapshotSends
// at a time.
//
// Send never blocks. The caller owns the gRPC server and its listener; Stop
// ends the transport's own goroutines and streams, not the server.
type Transport struct {
	cfg   TransportConfig
	log   *slog.Logger
	node  atomic.Pointer[LocalNode] // nil until SetNode
	stopc chan struct{}             // closed by Stop
	// ctx is the parent of every peer's context; Stop cancels it, also
	// ending removed peers that are still draining.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // guards peers, streams and stopped, and wg.Add against Stop
	peers   map[uint64]*peer
	streams map[net.Conn]struct{} // accepted log streams (stream.go)
	stopped bool
	wg      sync.WaitGroup // sender, snapshot and accepted-stream goroutines

	sendFailures, reconnects, dropped atomic.Uint64
	sent                              atomic.Uint64 // messages written to log streams

	// snapTurns holds one token per snapshot send in flight.
	snapTurns chan struct{}
	// snapInFlight counts the snapshot sends holding a turn, and
	// snapMaxInFlight is its high-water mark; snapSent and snapFailed count
	// the sends reported to raft as finished and as failed (including
	// those that never got a turn or whose peer was unknown), snapSentBytes
	// the data of those in snapSent.
	snapInFlight, snapMaxInFlight       atomic.Int64
	snapSent, snapFailed, snapSentBytes atomic.Uint64

	mismatches mismatchLog // of other clusters' streams and snapshots (streamid.go)

	// bounds is what the transport accepts from peers (peerbounds.go).
	bounds *peerBounds
	// ownHandshakes is set when the transport made cfg.HandshakeLog: Stop
	// closes it.
	ownHandshakes bool
}

var _ Sender = (*Transport)(nil)

// peer is the sending side towards one member. Its goroutine owns conn and
// the stream.
type peer struct {
	id     uint64
	addr   string
	conn   *grpc.ClientConn
	client peerpb.PeerClient
	queue  chan *raftpb.Message
	// closing is closed by RemovePeer: send what is queued, then exit.
	closing chan struct{}
	ctx     context.Context // canceled by Stop, a replacing AddPeer, or removeGrace after RemovePeer
	cancel  context.CancelFunc
}

// NewTransport returns a transport with no peers. Call SetNode once the
// Node exists and Register on the gRPC server before peers can reach it.
func NewTransport(cfg TransportConfig) *Transport {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = defaultQueueSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Faults == nil {
		cfg.Faults = noFaults{}
	}
	if cfg.SnapshotChunkSize <= 0 {
		cfg.SnapshotChunkSize = defaultSnapshotChunkSize
	}
	if cfg.MaxConcurrentSnapshotSends <= 0 {
		cfg.MaxConcurrentSnapshotSends = defaultMaxConcurrentSnapshotSends
	}
	if cfg.SnapshotWaitTimeout <= 0 {
		cfg.SnapshotWaitTimeout = defaultSnapshotWaitTimeout
	}
	ownHandshakes := cfg.HandshakeLog == nil
	if ownHandshakes {
		cfg.HandshakeLog = NewHandshakeLog(cfg.Logger)
	}
	if cfg.MaxEntryBytes <= 0 {
		cfg.MaxEntryBytes = defaultMaxEntryBytes
	}
	cfg.TLS, cfg.ServerTLS = cfg.Gate.ClientTLS(cfg.TLS), cfg.Gate.ServerTLS(cfg.ServerTLS)
	ctx, cancel := context.WithCancel(context.Background())
	log := cfg.Logger.With("raft_id", memberID(cfg.ID), "component", "transport")
	return &Transport{
		ctx:           ctx,
		cancel:        cancel,
		cfg:           cfg,
		log:           log,
		stopc:         make(chan struct{}),
		peers:         make(map[uint64]*peer),
		streams:       make(map[net.Conn]struct{}),
		snapTurns:     make(chan struct{}, cfg.MaxConcurrentSnapshotSends),
		bounds:        newPeerBounds(cfg, log),
		ownHandshakes: ownHandshakes,
	}
}

// SetNode makes n (usually the *Node) the receiver of the messages peers
// send to this transport and of its reports. Until it is called, received
// messages are dropped and snapshots refused.
func (t *Transport) SetNode(n LocalNode) {
	t.node.Store(&n)
}

// local returns the node set by SetNode, nil before.
func (t *Transport) local() LocalNode {
	if n := t.node.Load(); n != nil {
		return *n
	}
	return nil
}

// streamWindow is the HTTP/2 flow-control window of every peer gRPC stream
// and connection (snapshots and the callers' peer services). Setting it
// turns off gRPC's bandwidth-delay probing, which answers a stream of small
// messages with a ping (and the peer with a ping ack) per read: two
// syscalls per message on each side for nothing.
const streamWindow = 4 << 20

// ServerOptions returns the options the gRPC server that carries the peer
// service (Register) should be created with: the flow-control window
// matching the transport's dialing side.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InitialWindowSize(streamWindow), grpc.InitialConnWindowSize(streamWindow)}
}

// Register registers the transport's gRPC service (metalog.peer.v1.Peer,
// which serves only SendSnapshot) on s, which the caller owns (and with it
// the listener, TLS and message size limits). Snapshots arrive in
// SnapshotChunkSize pieces, so the default 4 MiB receive limit suffices
// unless the sender's chunks are larger.
func (t *Transport) Register(s grpc.ServiceRegistrar) {
	peerpb.RegisterPeerServer(s, &snapshotServer{t: t})
}

// AddPeer starts sending to member id at addr (host:port of its peer
// service). Adding a known peer with the same address does nothing; with a
// new address it replaces the old connection. Adding the local id, or
// adding after Stop, does nothing. It does not block on the network.
func (t *Transport) AddPeer(id uint64, addr string) error {
	if id == 0 {
		return errors.New("raftlog: add peer: id must be non-zero")
	}
	if id == t.cfg.ID {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return nil
	}
	if old := t.peers[id]; old != nil {
		if old.addr == addr {
			return nil
		}
		old.cancel()
		delete(t.peers, id)
	}
	opts := []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: minBackoff, Multiplier: 2, Jitter: 0.2, MaxDelay: maxBackoff},
		MinConnectTimeout: 5 * time.Second,
	}), grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(streamWindow)}
	if t.cfg.DialOptions == nil {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	opts = append(opts, t.cfg.DialOptions...)
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return fmt.Errorf("raftlog: add peer %d at %q: %w", id, addr, err)
	}
	ctx, cancel := context.WithCancel(t.ctx)
	p := &peer{
		id:      id,
		addr:    addr,
		conn:    conn,
		client:  peerpb.NewPeerClient(conn),
		queue:   make(chan *raftpb.Message, t.cfg.QueueSize),
		closing: make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
	}
	t.peers[id] = p
	t.wg.Add(1)
	go t.runPeer(p)
	t.log.Info("peer added", "peer", memberID(id), "addr", addr)
	return nil
}

// RemovePeer stops sending to member id and closes its connection. What
// was queued for it is still sent, for at most a couple of seconds: after
// applying a member's removal the leader's last messages tell the removed
// member that its removal committed. Unknown ids are ignored.
func (t *Transport) RemovePeer(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.peers[id]; p != nil {
		close(p.closing)
		time.AfterFunc(removeGrace, p.cancel)
		delete(t.peers, id)
		t.log.Info("peer removed", "peer", memberID(id))
	}
}

// Stop closes every stream and connection and waits for the transport's
// goroutines to exit. Streams peers opened to this transport's service end
// with their next batch (or when the caller stops the gRPC server). It is
// idempotent.
func (t *Transport) Stop() {
	t.mu.Lock()
	if !t.stopped {
		t.stopped = true
		close(t.stopc)
		t.cancel()
		for id, p := range t.peers {
			p.cancel()
			delete(t.peers, id)
		}
		for c := range t.streams {
			c.Close()
		}
	}
	t.mu.Unlock()
	t.wg.Wait()
	t.bounds.close()
	if t.ownHandshakes {
		t.cfg.HandshakeLog.Close()
	}
}

// SnapshotStats returns the transport's snapshot sends now.
func (t *Transport) SnapshotStats() SnapshotStats {
	return SnapshotStats{SendsInFlight: int(t.snapInFlight.Load())}
}

// Stats returns the transport's counters.
func (t *Transport) Stats() TransportStats {
	return TransportStats{
		SendFailures: t.sendFailures.Load(),
		Reconnects:   t.reconnects.Load(),
		Dropped:      t.dropped.Load(),
	}
}

// Send implements Sender. It never blocks: each message is queued for its
// peer's goroutine, or dropped (and the peer reported unreachable) when the
// queue is full. A MsgSnap gets a goroutine of its own.
func (t *Transport) Send(msgs []*raftpb.Message) {
	n := t.local()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	for _, m := range msgs {
		to := m.GetTo()
		if to == t.cfg.ID {
			continue
		}
		if t.cfg.Faults.Dropped(t.cfg.ID, to) {
			if m.GetType() == raftpb.MsgSnap {
				// Raft sends the peer nothing until it hears how the
				// snapshot went: a lost one must be reported.
				t.failSnapshotLocked(n, m, errors.New("raftlog: snapshot dropped by fault injection"))
			}
			continue
		}
		p := t.peers[to]
		if p == nil {
			t.dropped.Add(1)
			if m.GetType() == raftpb.MsgSnap {
				t.failSnapshotLocked(n, m, fmt.Errorf("raftlog: snapshot to unknown peer %d", to))
			}
			continue
		}
		if m.GetType() == raftpb.MsgSnap {
			t.wg.Add(1)
			go t.sendSnapshot(n, p, m)
			continue
		}
		select {
		case p.queue <- m:
		default:
			t.dropped.Add(1)
			if n != nil {
				n.ReportUnreachable(to)
			}
		}
	}
}

// failSnapshotLocked reports snapshot message m, which was not sent, to
// OnSnapshotSent and to n. The reports come from a goroutine: they may
// block, and Send runs on the node's goroutine.
func (t *Transport) failSnapshotLocked(n LocalNode, m *raftpb.Message, err error) {
	t.snapFailed.Add(1)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		if t.cfg.OnSnapshotSent != nil {
			t.cfg.OnSnapshotSent(len(m.GetSnapshot().GetData()), 0, err)
		}
		if n != nil {
			n.ReportSnapshot(m.GetTo(), raft.SnapshotFailure)
		}
	}()
}

// receive steps the node with one message received. Messages the
// node cannot take (stopped, not yet set, addressed elsewhere) are dropped
// like a lossy network would; only a stopped transport is an error. A
// message of a member this node knows to be removed (LocalNode.PeerRemoved)
// is not stepped: removal says so, for the stream to tell the sender.
func (t *Transport) receive(ctx context.Context, m *raftpb.Message) (removal removedAnswer, err error) {
	select {
	case <-t.stopc:
		return removal, status.Error(codes.Unavailable, "raftlog: transport stopped")
	default:
	}
	if t.cfg.Faults.Dropped(m.GetFrom(), m.GetTo()) {
		return removal, nil
	}
	n := t.local()
	if n == nil {
		return removal, nil
	}
	if removal.at, removal.leader = n.PeerRemoved(m.GetFrom()); removal.at != 0 {
		return removal, nil
	}
	if err := n.Step(ctx, m); err != nil {
		if ctx.Err() != nil {
			return removal, status.FromContextError(ctx.Err()).Err()
		}
		if !errors.Is(err, ErrStopped) {
			t.log.Debug("drop received message", "type", m.GetType().String(), "from", memberID(m.GetFrom()), "err", err)
		}
	}
	return removal, nil
}

// removedAnswer is what a node answers a removed member (streamRemoved):
// the index of its removal (0: the sender is not removed) and whether the
// node leads.
type removedAnswer struct {
	at     uint64
	leader bool
}
