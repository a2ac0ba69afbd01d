package raftlog

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// A log stream says which cluster its dialer belongs to: after the preface
// (and the TLS handshake) the dialer's first frame is a hello, a
// raftpb.Message of type MsgHup (a local message raft never sends to a
// peer, so a member of a release before this one drops it) whose Context
// is helloPrefix and the dialer's cluster id, 8 bytes big-endian. A
// listener that knows another cluster id answers streamMismatch and its
// own id (8 bytes) and closes the stream. When the message the dialer
// sends after its hello is a leader's (an append, a heartbeat, a
// snapshot), the dialer leads a cluster that has the listener as a member,
// while the listener's log belongs to another: the listener stops
// (LocalNode.ReportForeign). A listener whose log was forced from the
// dialer's cluster (forced.go) stops nobody but the dialer: it answers
// streamForced and the Forcing (32 bytes), and the dialer stops as a
// member of a cluster that was forced into a new one. Snapshots carry the
// id in the metadata of their gRPC stream (clusterIDKey). An id of 0 (a
// log written before ids were recorded, or a member of an earlier
// release) is not checked.
const (
	helloPrefix    = "metalog cluster "
	streamMismatch = 'C'
	streamForced   = 'F'
	clusterIDKey   = "x-metalog-cluster-id"
)

// mismatchLogEvery bounds how often one peer's cluster mismatch is logged
// at ERROR: the refused member reconnects every few hundred milliseconds.
const mismatchLogEvery = time.Minute

// hello is the first frame of a stream from member from of cluster to
// member to.
func hello(from, to, cluster uint64) []byte {
	ctx := binary.BigEndian.AppendUint64([]byte(helloPrefix), cluster)
	return marshalMessage(&raftpb.Message{Type: raftpb.MsgHup.Enum(), From: new(from), To: new(to), Context: ctx}, to)
}

// helloCluster returns the cluster id of a hello frame, and false for any
// other message.
func helloCluster(m *raftpb.Message) (uint64, bool) {
	ctx := m.GetContext()
	if m.GetType() != raftpb.MsgHup || len(ctx) != len(helloPrefix)+8 || string(ctx[:len(helloPrefix)]) != helloPrefix {
		return 0, false
	}
	return binary.BigEndian.Uint64(ctx[len(helloPrefix):]), true
}

// isLeaderTraffic reports whether only a leader sends messages of type t
// to a member of its configuration.
func isLeaderTraffic(t raftpb.MessageType) bool {
	switch t {
	case raftpb.MsgApp, raftpb.MsgHeartbeat, raftpb.MsgSnap, raftpb.MsgTimeoutNow:
		return true
	}
	return false
}

// foreign compares a peer's cluster id with the local node's: it returns
// the local id and whether the two are known and differ.
func (t *Transport) foreign(remote uint64) (local uint64, differ bool) {
	n := t.local()
	if n == nil {
		return 0, false
	}
	local = n.ClusterID()
	return local, local != 0 && remote != 0 && local != remote
}

// refuseStream ends a stream whose hello, from member from, names cluster
// remote, when that is another cluster than this node's; it reports
// whether it did. It reads the next message to see whether the dialer
// leads, tells the dialer this node's cluster id, and logs both. A leader
// of another cluster stops this node as foreign only when certified (a
// certificate proved the sender is a member this node knows, or the
// transport has no Gate): without peer TLS anyone can say so, and a
// member does not stop on the word of anyone.
func (t *Transport) refuseStream(c net.Conn, fr *frameReader, from, remote uint64, certified bool) bool {
	local, differ := t.foreign(remote)
	if !differ {
		return false
	}
	// An uncertified sender may name any member and cluster: its lines
	// are limited per source, not per name.
	key := fmt.Sprintf("%x %x", from, remote)
	if !certified {
		key, _, _ = net.SplitHostPort(c.RemoteAddr().String())
	}
	if f, ok := forcedFrom(t.local(), remote); ok {
		t.mismatches.log(t, "forced "+key, "refused a log stream of a member of the cluster this member was forced from; told it to stop",
			"peer", FormatID(from), "remote", c.RemoteAddr().String(), "peer_cluster", FormatID(remote), "cluster", FormatID(local), "forced_at_index", f.Index)
		_ = c.SetWriteDeadline(time.Now().Add(streamDialTimeout))
		_, _ = c.Write(append([]byte{streamForced}, f.encode()...))
		return true
	}
	_ = c.SetReadDeadline(time.Now().Add(streamDialTimeout))
	leads := false
	if b, err := fr.next(); err == nil {
		m := &raftpb.Message{}
		leads = proto.Unmarshal(b, m) == nil && isLeaderTraffic(m.GetType()) && m.GetFrom() == from
	}
	err := fmt.Errorf("%w: member %s of cluster %s sends raft messages to this member, whose log belongs to cluster %s",
		ErrClusterMismatch, FormatID(from), FormatID(remote), FormatID(local))
	switch {
	case leads && certified:
		err = fmt.Errorf("%w; it leads a cluster that has this member as one of its own: this data dir is another cluster's", err)
		if n := t.local(); n != nil {
			n.ReportForeign(err)
		}
	case leads:
		err = fmt.Errorf("%w; it says it leads a cluster that has this member as one of its own, but without peer TLS nothing proves who it is: "+
			"this member goes on (if this data dir is another cluster's, stop it and move the data dir away)", err)
	}
	t.mismatches.log(t, "in "+key, "refused a log stream of another cluster", "remote", c.RemoteAddr().String(), "err", err)
	reply := binary.BigEndian.AppendUint64([]byte{streamMismatch}, local)
	_ = c.SetWriteDeadline(time.Now().Add(streamDialTimeout))
	_, _ = c.Write(reply)
	return true
}

// refusedStream logs that member to, at addr, refused this member's
// stream as another cluster's (remote is its id, read after the mismatch
// byte).
func (t *Transport) refusedStream(to uint64, addr string, remote uint64) {
	local, _ := t.foreign(remote)
	t.mismatches.log(t, fmt.Sprintf("out %x %x", to, remote), "a peer refused this member's log stream: it belongs to another cluster",
		"peer", FormatID(to), "addr", addr, "peer_cluster", FormatID(remote), "cluster", FormatID(local))
}

// snapshotCluster checks the cluster id of an incoming snapshot stream of
// member from, in md: another cluster's snapshot, which only its leader
// sends, stops this node as foreign when certified (as in refuseStream).
// It returns the error to answer with.
func (t *Transport) snapshotCluster(md metadata.MD, from uint64, certified bool) error {
	v := md.Get(clusterIDKey)
	if len(v) != 1 {
		return nil // a member of an earlier release, or of a log without id
	}
	remote, err := strconv.ParseUint(v[0], 16, 64)
	if err != nil {
		return fmt.Errorf("raftlog: snapshot from %s: cluster id %q: %v", FormatID(from), v[0], err)
	}
	local, differ := t.foreign(remote)
	if !differ {
		return nil
	}
	if f, ok := forcedFrom(t.local(), remote); ok {
		msg := fmt.Sprintf("%v: member %s of cluster %s sends a snapshot to this member, which was forced from that cluster into cluster %s at index %d",
			ErrClusterMismatch, FormatID(from), FormatID(remote), FormatID(local), f.Index)
		t.mismatches.log(t, fmt.Sprintf("forced snap %x %x", from, remote), "refused a snapshot of the cluster this member was forced from; told the sender to stop", "err", msg)
		return ForcedStatus(f, msg)
	}
	if !certified {
		err = fmt.Errorf("%w: member %s of cluster %s sends a snapshot to this member, whose log belongs to cluster %s; without peer TLS nothing proves who it is, and this member goes on",
			ErrClusterMismatch, FormatID(from), FormatID(remote), FormatID(local))
		t.mismatches.log(t, "snap uncertified", "refused a snapshot of another cluster", "err", err)
		return err
	}
	err = fmt.Errorf("%w: member %s of cluster %s, its leader, sends a snapshot to this member, whose log belongs to cluster %s: this data dir is another cluster's",
		ErrClusterMismatch, FormatID(from), FormatID(remote), FormatID(local))
	if n := t.local(); n != nil {
		n.ReportForeign(err)
	}
	t.mismatches.log(t, fmt.Sprintf("snap %x %x", from, remote), "refused a snapshot of another cluster", "err", err)
	return err
}

// forcedFrom reports whether the log of n (a transport's local node) was
// forced from cluster remote, and how.
func forcedFrom(n LocalNode, remote uint64) (Forcing, bool) {
	if ff, ok := n.(forcedFromer); ok {
		return ff.ForcedFrom(remote)
	}
	return Forcing{}, false
}

// toldForced stops n, a transport's local node, on the word of member by,
// whose log was forced from n's cluster (f): on a log stream's answer
// (watchStream) or a snapshot's (sendSnapshot).
func toldForced(n LocalNode, log *slog.Logger, by uint64, f Forcing) {
	if n == nil || n.ClusterID() == 0 || n.ClusterID() != f.From {
		return // not this node's cluster: nothing to believe
	}
	log.Error("this member's cluster was forced into a new cluster by another member; this data dir must not be started again",
		"by", FormatID(by), "cluster", FormatID(f.From), "new_cluster", FormatID(f.To), "forced_at_index", f.Index)
	n.ReportForeign(&ForcedError{Forcing: f})
}

// mismatchLog rate-limits the ERROR lines of cluster mismatches, per peer
// and direction.
type mismatchLog struct {
	logLimiter
}

// log logs msg with args at ERROR, or at DEBUG when the same key was
// logged at ERROR within mismatchLogEvery.
func (l *mismatchLog) log(t *Transport, key, msg string, args ...any) {
	if l.loud(key, mismatchLogEvery, time.Now()) {
		t.log.Error(msg, args...)
	} else {
		t.log.Debug(msg, args...)
	}
}
