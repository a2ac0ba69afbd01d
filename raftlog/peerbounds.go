package raftlog

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
)

// What a member accepts from a peer is bounded by what it would accept
// from its own clients: an entry is at most the largest entry proposed
// (TransportConfig.MaxEntryBytes, the caller's max_mutation_size), an
// append at most raft's MaxSizePerMsg beyond one entry, a snapshot at most
// what the largest state snapshots to. Twice MaxEntryBytes leaves room for
// a peer whose own limit is larger, up to double.
const (
	// defaultMaxEntryBytes is TransportConfig.MaxEntryBytes's default,
	// the default max_mutation_size.
	defaultMaxEntryBytes = 16 << 20
	// messageOverheadBytes covers a raft message's own fields and the
	// framing of its entries beyond their data.
	messageOverheadBytes = 64 << 10
	// snapshotOverheadBytes covers raftlog's envelope around the
	// Applier's snapshot (the member table and the removed ids).
	snapshotOverheadBytes = 1 << 20
	// defaultMaxMessageBytes is the longest log stream frame accepted
	// with the default MaxEntryBytes.
	defaultMaxMessageBytes = 2*defaultMaxEntryBytes + defaultMaxSizePerMsg + messageOverheadBytes
	// frameBudgetMessages is how many of the longest frames the buffers
	// of all log streams may hold together: one peer (the leader) sends
	// the large appends, another may be taking over.
	frameBudgetMessages = 2
	// maxInboundStreams bounds the log streams peers have open to this
	// member at once; a cluster needs one per other member, and another
	// while one reconnects.
	maxInboundStreams = 256
	// maxSnapshotReceives bounds the snapshots received at once: a leader
	// sends a follower one at a time, and a new leader may start while
	// the old one's is still arriving. A snapshot beyond it is refused
	// (raft sends it again later).
	maxSnapshotReceives = 2
	// streamReadBuffer is the bufio buffer of one inbound log stream.
	streamReadBuffer = 64 << 10
)

// maxMessageBytes is the longest log stream frame accepted when entries
// are at most maxEntry bytes.
func maxMessageBytes(maxEntry int64) int {
	return int(2*min(maxEntry, maxEntryBound)) + defaultMaxSizePerMsg + messageOverheadBytes
}

// maxSnapshotBytes is the largest snapshot data accepted when the state
// snapshots to at most maxEntry bytes.
func maxSnapshotBytes(maxEntry int64) uint64 {
	return uint64(2*min(maxEntry, maxEntryBound)) + snapshotOverheadBytes
}

// maxEntryBound caps MaxEntryBytes in the bounds, so that they do not
// overflow.
const maxEntryBound = 1 << 40

// peerBounds is what a Transport accepts from its peers, in bytes and in
// numbers, and the accounting that enforces it: the frames of the log
// streams (framereader.go) and the snapshots received (snaprecv.go).
// Refusals are logged at WARN once a minute per source host (sourceLog).
// Its methods are safe for concurrent use.
type peerBounds struct {
	log         *slog.Logger
	maxMessage  int    // longest frame
	maxSnapshot uint64 // largest snapshot data
	// snapDir is where snapshots being received are written: the node's
	// snap directory, whose leftover temporary files a restart removes.
	snapDir string
	frames  frameBudget
	streams atomic.Int64 // inbound log streams being served
	// maxStreams is maxInboundStreams (tests lower it before Listen).
	maxStreams int64
	snapTurns  chan struct{} // one token per snapshot being received
	refusals   *sourceLog
	recvHook   func(path string, written int64) // TransportConfig.recvHook
}

// newPeerBounds returns the bounds of a transport configured with cfg
// (defaults filled in), logging to log.
func newPeerBounds(cfg TransportConfig, log *slog.Logger) *peerBounds {
	b := &peerBounds{
		log:         log,
		maxMessage:  maxMessageBytes(cfg.MaxEntryBytes),
		maxSnapshot: maxSnapshotBytes(cfg.MaxEntryBytes),
		snapTurns:   make(chan struct{}, maxSnapshotReceives),
		refusals:    newSourceLog(log, "refused peer streams and snapshots"),
		recvHook:    cfg.recvHook,
		maxStreams:  maxInboundStreams,
	}
	b.frames.max = int64(frameBudgetMessages * b.maxMessage)
	b.snapDir = os.TempDir()
	if cfg.Dir != "" {
		b.snapDir = filepath.Join(cfg.Dir, snapDirName)
	}
	return b
}

// admitStream counts an inbound log stream from c, and reports false
// (counting nothing) when maxStreams are open already; leaveStream ends
// one admitted.
func (b *peerBounds) admitStream(c net.Conn) bool {
	if b.streams.Add(1) > b.maxStreams {
		b.streams.Add(-1)
		b.refused(c.RemoteAddr().String(), "peer stream refused: too many log streams open to this member",
			"open", b.maxStreams)
		return false
	}
	return true
}

func (b *peerBounds) leaveStream() {
	b.streams.Add(-1)
}

// frameReader returns the reader of the frames of stream c (after its
// preface and TLS handshake); the caller calls release when the stream
// ends.
func (b *peerBounds) frameReader(c net.Conn) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(c, streamReadBuffer), limit: b.maxMessage, budget: &b.frames,
		deadline: c.SetReadDeadline}
}

// streamEnded logs why stream c ended with err, the error of its frame
// reader: a frame refused by a bound at WARN (rate-limited per source), a
// broken stream at DEBUG, its end not at all.
func (b *peerBounds) streamEnded(c net.Conn, err error) {
	remote := c.RemoteAddr().String()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, errFrameTooLarge):
		b.refused(remote, "peer stream closed: it sent a message larger than this member accepts (at most twice max_mutation_size, plus raft's 1 MiB per append); give every member the same max_mutation_size",
			"err", err)
	case errors.Is(err, errFrameBudget):
		b.refused(remote, "peer stream closed: the messages arriving on all peer streams hold too many bytes at once; the peer sends again",
			"err", err)
	default:
		b.log.Debug("peer stream ended", "remote", remote, "err", err)
	}
}

// refused logs a refusal of what remote (host:port) sent: at WARN once a
// minute per source host, the repeats at DEBUG and counted in the next
// minute's summary.
func (b *peerBounds) refused(remote, msg string, args ...any) {
	args = append([]any{"remote", remote}, args...)
	if b.refusals.note(sourceHost(remote)) {
		b.log.Warn(msg, args...)
		return
	}
	b.log.Debug(msg, args...)
}

// close logs what is still to be summarised and stops the timer.
func (b *peerBounds) close() {
	b.refusals.close()
}

// sourceHost returns the host of remote (host:port): the connections of
// one peer share it, whatever their source port.
func sourceHost(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
