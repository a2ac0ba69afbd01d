package raftlog

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/internal/connfail"
)

const (
	// handshakeLogEvery bounds how often a TLS handshake failure with one
	// peer, for one reason, is logged at WARN: a peer that cannot complete
	// the handshake tries again every few hundred milliseconds, and one
	// line says all there is to say.
	handshakeLogEvery = time.Minute
	// handshakeRecent is how long a failed handshake stays among the
	// Recent ones after it last failed.
	handshakeRecent = 30 * time.Second
	// handshakeKeep bounds the failures remembered: past it the ones no
	// longer recent are forgotten first.
	handshakeKeep = 64
)

// handshakeHint says what to check after a failed peer TLS handshake.
const handshakeHint = "every member's peer certificate (--peer-cert-file) must be signed by the CA in every other member's --peer-ca-file, be valid for the address the others dial, " +
	"and name its member (subject CN or a DNS SAN equal to --name); a member refuses a certificate naming no current member with a bad_certificate alert"

// HandshakeFailure is a peer TLS handshake that failed, as HandshakeLog
// remembers it.
type HandshakeFailure struct {
	// Addr is the peer's address: the one this member dialed (a member's
	// peer address), or, when the peer dialed this member (Accepted), the
	// host the connection came from.
	Addr string
	// Accepted says the peer opened the connection.
	Accepted bool
	// Peer is the member id dialed, when known; 0 otherwise.
	Peer uint64
	// Reason says why in a few words (connfail.TLSReason): "certificate
	// signed by unknown authority", "remote error: tls: bad certificate"
	// (the peer refused this member's certificate).
	Reason string
	// At is when it failed last.
	At time.Time
}

// String is the failure as /readyz shows it: "peer TLS handshake with
// 127.0.0.1:7171 failed: certificate signed by unknown authority (member
// 8b37b07b558d4c0)".
func (f HandshakeFailure) String() string {
	switch {
	case f.Accepted:
		return fmt.Sprintf("peer TLS handshake from %s failed: %s (a peer dialed this member)", f.Addr, f.Reason)
	case f.Peer != 0:
		return fmt.Sprintf("peer TLS handshake with %s failed: %s (member %s)", f.Addr, f.Reason, FormatID(f.Peer))
	}
	return fmt.Sprintf("peer TLS handshake with %s failed: %s", f.Addr, f.Reason)
}

// HandshakeLog logs the peer TLS handshakes that fail, on both sides (the
// log streams of a Transport, and the peer gRPC connections whose
// credentials go through Credentials), and remembers the recent ones for
// readiness. A failure is a WARN line with the peer's address and the
// reason (the repeats go to DEBUG): a mismatch that keeps a member out of
// its cluster is said on both sides, without flooding either log. A
// handshake this member dialed is said at most once per handshakeLogEvery
// for one peer and reason. One a peer opened is said at most once a minute
// per source host, whatever its port and reason (both are the other
// side's to choose), and for at most sourceLoudHosts hosts a minute; the
// failures held back are counted and said in one line a minute ("12 more
// failed handshakes from 10.0.0.7 in the last minute"). Its methods are
// safe for concurrent use; Close stops its timer.
type HandshakeLog struct {
	log     *slog.Logger
	limit   logLimiter
	sources *sourceLog // of the handshakes peers opened
	now     func() time.Time

	mu       sync.Mutex // guards failures
	failures map[handshakeKey]HandshakeFailure
}

// handshakeKey is the peer a failure is remembered under.
type handshakeKey struct {
	addr     string
	accepted bool
}

// NewHandshakeLog returns a HandshakeLog that logs to logger (nil
// discards).
func NewHandshakeLog(logger *slog.Logger) *HandshakeLog {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &HandshakeLog{log: logger.With("component", "peer-tls"), now: time.Now, failures: make(map[handshakeKey]HandshakeFailure)}
	h.sources = newSourceLog(h.log, "failed handshakes")
	h.sources.now = func() time.Time { return h.now() }
	return h
}

// Close says how many failed handshakes were held back since the last
// summary, and stops the timer that summarises them once a minute. It is
// called once nothing fails any more through h (the peer server and the
// transport stopped); a failure noted after it is still counted.
func (h *HandshakeLog) Close() {
	h.sources.close()
}

// Dialed notes that a handshake this member made as the client with a
// peer at addr (peer is its member id, 0 when not known) failed with err.
// An err that is a TLS handshake's failure (connfail.TLSReason reads it,
// also inside a gRPC error) is logged and remembered; any other only goes
// to DEBUG (a peer that is down is not a TLS problem). A failure is
// forgotten handshakeRecent after the last one, not at the next success:
// a peer that refuses this member's certificate does so after a
// handshake that looked complete on this side (TLS 1.3), and a success
// in between would hide it.
func (h *HandshakeLog) Dialed(addr string, peer uint64, err error) {
	h.failed(handshakeKey{addr: addr}, peer, err)
}

// accepted notes the failure of a handshake a peer at remote (host:port)
// opened to this member; it is remembered under the host, which all the
// connections of one peer share.
func (h *HandshakeLog) accepted(remote string, err error) {
	host, _, splitErr := net.SplitHostPort(remote)
	if splitErr != nil {
		host = remote
	}
	h.failed(handshakeKey{addr: host, accepted: true}, 0, err)
}

// tlsReason is why a handshake failed, in a few words, and false when
// err (a Go error of crypto/tls, or a gRPC call's) is not a TLS failure.
func tlsReason(err error) (string, bool) {
	if _, isStatus := status.FromError(err); isStatus {
		_, why := connfail.Of(err)
		return strings.CutPrefix(why, connfail.TLSPrefix)
	}
	return connfail.TLSReason(err.Error())
}

// failed logs and remembers a failed handshake with key's peer.
func (h *HandshakeLog) failed(key handshakeKey, peer uint64, err error) {
	reason, ok := tlsReason(err)
	if !ok {
		h.log.Debug("peer handshake ended", "peer", key.addr, "accepted", key.accepted, "err", err)
		return
	}
	now := h.now()
	h.mu.Lock()
	if len(h.failures) >= handshakeKeep {
		h.forgetLocked(now)
	}
	if peer == 0 {
		peer = h.failures[key].Peer // a gRPC dial does not know the id the log stream gave
	}
	h.failures[key] = HandshakeFailure{Addr: key.addr, Accepted: key.accepted, Peer: peer, Reason: reason, At: now}
	h.mu.Unlock()
	args := []any{"peer", key.addr, "reason", reason, "hint", handshakeHint}
	if peer != 0 {
		args = append(args, "peer_id", memberID(peer))
	}
	msg := "peer TLS handshake failed: this member cannot reach the peer"
	if key.accepted {
		msg = "peer TLS handshake failed: a peer cannot reach this member"
	}
	var loud bool
	if key.accepted {
		loud = h.sources.note(key.addr)
	} else {
		loud = h.limit.loud(fmt.Sprintf("%s %s", key.addr, reason), handshakeLogEvery, now)
	}
	if loud {
		h.log.Warn(msg, args...)
	} else {
		h.log.Debug(msg, args...)
	}
}

// forgetLocked drops the failures that are no longer recent, or all of
// them when every one is.
func (h *HandshakeLog) forgetLocked(now time.Time) {
	for k, f := range h.failures {
		if now.Sub(f.At) >= handshakeRecent {
			delete(h.failures, k)
		}
	}
	if len(h.failures) >= handshakeKeep {
		clear(h.failures)
	}
}

// Recent returns the handshakes that failed in the last handshakeRecent,
// one per peer (its last failure), those this member dialed first, then
// by address. The caller owns the slice.
func (h *HandshakeLog) Recent() []HandshakeFailure {
	now := h.now()
	h.mu.Lock()
	var out []HandshakeFailure
	for _, f := range h.failures {
		if now.Sub(f.At) < handshakeRecent {
			out = append(out, f)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b HandshakeFailure) int {
		if a.Accepted != b.Accepted {
			if a.Accepted {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Addr, b.Addr)
	})
	return out
}

// Credentials wraps the transport credentials of the peer gRPC server and
// of the peer gRPC dials (snapshots, the members' status calls) so that
// their failed TLS handshakes are logged and remembered here like those of
// the log streams.
func (h *HandshakeLog) Credentials(c credentials.TransportCredentials) credentials.TransportCredentials {
	return loggedCredentials{TransportCredentials: c, h: h}
}

// loggedCredentials reports the handshakes of its credentials to h.
type loggedCredentials struct {
	credentials.TransportCredentials
	h *HandshakeLog
}

// ClientHandshake implements credentials.TransportCredentials.
func (c loggedCredentials) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		addr := authority
		if addr == "" {
			addr = raw.RemoteAddr().String()
		}
		c.h.Dialed(addr, 0, err)
	}
	return conn, info, err
}

// ServerHandshake implements credentials.TransportCredentials.
func (c loggedCredentials) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		c.h.accepted(raw.RemoteAddr().String(), err)
	}
	return conn, info, err
}

// Clone implements credentials.TransportCredentials.
func (c loggedCredentials) Clone() credentials.TransportCredentials {
	return loggedCredentials{TransportCredentials: c.TransportCredentials.Clone(), h: c.h}
}

// logLimiter decides which repeats of a line are logged loud: the line of
// one key (a peer, a direction, a reason) at most once per interval, the
// others quietly. Cluster mismatches (mismatchLog) and failed handshakes
// share it.
type logLimiter struct {
	mu   sync.Mutex // guards last
	last map[string]time.Time
}

// limiterKeep bounds the keys a logLimiter remembers: past it the ones
// whose interval is over are forgotten.
const limiterKeep = 1024

// loud reports whether the line of key is logged loud at now, given that
// it is logged loud at most once per every, and notes it when it is. With
// limiterKeep keys all logged within every, a new key is quiet: what is
// remembered stays bounded.
func (l *logLimiter) loud(key string, every time.Duration, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.last[key]) < every {
		return false
	}
	if l.last == nil {
		l.last = make(map[string]time.Time)
	}
	if _, known := l.last[key]; !known && len(l.last) >= limiterKeep {
		for k, t := range l.last {
			if now.Sub(t) >= every {
				delete(l.last, k)
			}
		}
		if len(l.last) >= limiterKeep {
			return false
		}
	}
	l.last[key] = now
	return true
}
