package raftlog

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	grpcpeer "google.golang.org/grpc/peer"
)

// The peer port trusts members only. Every connection to it (a log
// stream, a snapshot stream, a peer RPC) is bound to one member before
// anything it sends is decoded:
//
//   - With peer TLS, by its certificate: the TLS handshake refuses a
//     certificate that does not identify a current member
//     (PeerAuthorizer.CertificateMember), or that does not allow both
//     server and client use; the id it identifies is the only one the
//     connection may speak for. A member dialing a peer checks the same of
//     the peer's certificate.
//   - Without TLS there is no proof of identity: a log stream is bound to
//     the member its first message names, which must be a member this
//     node knows (PeerAuthorizer.KnownMember), and a peer call must name
//     one in its metadata (PeerMemberIDKey or PeerMemberNameKey). This
//     keeps out processes that do not know the membership; it does not
//     keep out one that names a member, which is why a member never stops
//     on the word of an uncertified peer (refuseStream, snapshotCluster).
//
// After that, every raft message of a stream must come From the member it
// is bound to: a stream that sends as another member is closed. Refusals
// are logged at WARN with the certificate's subject (or the id named) and
// the source, at most once a minute per source host, reason and
// certificate subject (the repeats at DEBUG).

// Metadata keys of a peer gRPC call naming its caller: its member id (hex,
// as FormatID prints it) and its name. Without peer TLS the peer
// server believes one of them, if it names a current member; with peer TLS
// the certificate says who calls and they are not read.
const (
	PeerMemberIDKey   = "x-metalog-member-id"
	PeerMemberNameKey = "x-metalog-member-name"
)

// peerRefusalLogEvery bounds how often refusals of one source, for one
// reason, are logged at WARN: a refused peer retries every few hundred
// milliseconds, and a stranger may try as often as it likes.
const peerRefusalLogEvery = time.Minute

var (
	// ErrNotMember is matched by the refusal of a peer connection or call
	// that does not come from a current member of the cluster: a
	// certificate that names none (or names a removed one), an id or name
	// that is not a member's, or nothing naming a member at all.
	ErrNotMember = errors.New("raftlog: peer refused: not a current member of this cluster")

	// ErrPeerUsage is matched by the refusal of a peer certificate that
	// does not allow both server and client use (extended key usage): every
	// member both dials and is dialed with its one certificate.
	ErrPeerUsage = errors.New("raftlog: peer certificate refused: it must allow both server and client use (extended key usage serverAuth and clientAuth)")

	// ErrWrongSender is matched by the refusal of a raft message, or a
	// snapshot, whose From is not the member its connection is bound to.
	ErrWrongSender = errors.New("raftlog: peer refused: a message sent as another member")
)

// PeerAuthorizer maps a peer to the current member it is, for a PeerGate;
// package member implements it from its membership. Its methods are called
// from the goroutines of TLS handshakes, log streams and gRPC handlers,
// several at a time: they must be safe for concurrent use, not block, and
// stay cheap (one call per connection or call, not per message).
type PeerAuthorizer interface {
	// CertificateMember returns the id of the current member, other than
	// this node, that cert (already verified against the peer CA by the
	// handshake) identifies, or an error wrapping ErrNotMember saying why
	// it identifies none. It returns 0 and no error only while the node
	// knows no membership at all (a member still starting): a dialer then
	// trusts the CA alone.
	CertificateMember(cert *x509.Certificate) (uint64, error)
	// KnownMember returns the id of the current member, other than this
	// node, that id (when not 0) or else name names, or an error wrapping
	// ErrNotMember: the check of a peer that has no certificate.
	KnownMember(id uint64, name string) (uint64, error)
}

// PeerGate admits the connections and calls of the peer port that come
// from members, and refuses the rest (see the comment above). A nil
// *PeerGate admits everything the TLS handshake (if any) admits, the log
// streams bound to the id of their first message. Its methods are safe for
// concurrent use.
type PeerGate struct {
	auth  PeerAuthorizer
	log   *slog.Logger
	limit logLimiter
}

// NewPeerGate returns a gate that asks auth who a peer is and logs its
// refusals to logger (nil discards).
func NewPeerGate(auth PeerAuthorizer, logger *slog.Logger) *PeerGate {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &PeerGate{auth: auth, log: logger.With("component", "peer-trust")}
}

// PeerCall is who made a peer gRPC call, as PeerGate.Caller found out.
type PeerCall struct {
	// ID is the caller's member id; 0 when a nil gate admitted the call
	// without asking.
	ID uint64
	// Certified says a certificate proved it (peer TLS), or a nil gate
	// trusts every caller; false means the caller only named itself.
	Certified bool
}

// String is the caller as logs show it: "member 8b37b07b558d4c0
// (certificate)".
func (c PeerCall) String() string {
	how := "named in the call, not proved: no peer TLS"
	if c.Certified {
		how = "certificate"
	}
	return fmt.Sprintf("member %s (%s)", FormatID(c.ID), how)
}

// ServerTLS returns base (the peer listener's TLS, which must require and
// verify client certificates) with a check, inside every handshake, that
// the client's certificate identifies a current member: any other is
// refused with a bad_certificate alert before a byte of the connection is
// read, and logged with its subject. A nil gate or base returns base.
func (g *PeerGate) ServerTLS(base *tls.Config) *tls.Config {
	if g == nil || base == nil {
		return base
	}
	outer := base.Clone()
	outer.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		cfg := base
		if base.GetConfigForClient != nil {
			c, err := base.GetConfigForClient(hi)
			if err != nil {
				return nil, err
			}
			if c != nil {
				cfg = c
			}
		}
		cfg = cfg.Clone()
		cfg.GetConfigForClient = nil
		remote := "unknown"
		if hi.Conn != nil {
			remote = hi.Conn.RemoteAddr().String()
		}
		cfg.VerifyConnection = chainVerify(cfg.VerifyConnection, func(cs tls.ConnectionState) error {
			_, err := g.certMember(cs, remote)
			return err
		})
		return cfg, nil
	}
	return outer
}

// ClientTLS returns base (the TLS of this member's dials to its peers)
// with a check that the peer's certificate identifies a current member
// (any: a gRPC dial does not say which it meant; the log stream checks the
// id after the handshake). While the node knows no membership the CA
// alone is trusted. A nil gate or base returns base.
func (g *PeerGate) ClientTLS(base *tls.Config) *tls.Config {
	if g == nil || base == nil {
		return base
	}
	c := base.Clone()
	c.VerifyConnection = chainVerify(c.VerifyConnection, func(cs tls.ConnectionState) error {
		_, err := g.dialedMember(cs, 0, cs.ServerName)
		return err
	})
	return c
}

// chainVerify returns a VerifyConnection callback running first, if not
// nil, then then.
func chainVerify(first, then func(tls.ConnectionState) error) func(tls.ConnectionState) error {
	if first == nil {
		return then
	}
	return func(cs tls.ConnectionState) error {
		if err := first(cs); err != nil {
			return err
		}
		return then(cs)
	}
}

// certMember returns the member id the client certificate of a connection
// from remote identifies, refusing (and logging) one that identifies none.
// A nil gate returns 0: the stream is bound by its first message.
func (g *PeerGate) certMember(cs tls.ConnectionState, remote string) (uint64, error) {
	if g == nil {
		return 0, nil
	}
	if len(cs.PeerCertificates) == 0 {
		err := fmt.Errorf("%w: no certificate presented", ErrNotMember)
		g.refused(remote, "", "refused a peer connection without a certificate", "err", err)
		return 0, err
	}
	leaf := cs.PeerCertificates[0]
	id, err := g.certificateMember(leaf)
	if err == nil && id == 0 {
		err = fmt.Errorf("%w: this member knows no membership yet", ErrNotMember)
	}
	if err != nil {
		g.refused(remote, leaf.Subject.String(), "refused a peer certificate: it does not identify a current member", "err", err)
		return 0, err
	}
	return id, nil
}

// dialedMember checks the certificate a peer this member dialed at addr
// presented: it must identify a current member, member to when to is not
// 0. While the node knows no membership (CertificateMember answers 0) the
// CA alone is trusted.
func (g *PeerGate) dialedMember(cs tls.ConnectionState, to uint64, addr string) (uint64, error) {
	if g == nil || len(cs.PeerCertificates) == 0 {
		return 0, nil
	}
	leaf := cs.PeerCertificates[0]
	id, err := g.certificateMember(leaf)
	if err == nil && to != 0 && id != 0 && id != to {
		err = fmt.Errorf("%w: the certificate at %s identifies member %s, not member %s, which this member dialed there", ErrNotMember, addr, FormatID(id), FormatID(to))
	}
	if err != nil {
		g.refused(addr, leaf.Subject.String(), "refused the certificate of a peer this member dialed: it does not identify the member dialed", "err", err)
		return 0, err
	}
	return id, nil
}

// certificateMember checks cert's usages, then asks the authorizer.
func (g *PeerGate) certificateMember(cert *x509.Certificate) (uint64, error) {
	if err := CheckPeerUsage(cert); err != nil {
		return 0, err
	}
	return g.auth.CertificateMember(cert)
}

// CheckPeerUsage requires cert to allow both server and client use: a
// member's one certificate serves both, so a certificate issued for one
// use only (a client's) is not a member's.
func CheckPeerUsage(cert *x509.Certificate) error {
	if slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageAny) {
		return nil
	}
	if slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) && slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return nil
	}
	return ErrPeerUsage
}

// Caller returns who made the peer gRPC call of ctx: with peer TLS the
// member its certificate identifies (checked again at every call, so that
// a member removed since the connection opened is refused); without, the
// current member the call names (PeerMemberIDKey, PeerMemberNameKey). A
// refusal wraps ErrNotMember and is logged. A nil gate admits every call.
func (g *PeerGate) Caller(ctx context.Context) (PeerCall, error) {
	if g == nil {
		return PeerCall{Certified: true}, nil
	}
	remote := remoteOf(ctx)
	if p, ok := grpcpeer.FromContext(ctx); ok {
		if ti, isTLS := p.AuthInfo.(credentials.TLSInfo); isTLS {
			id, err := g.certMember(ti.State, remote)
			return PeerCall{ID: id, Certified: true}, err
		}
	}
	id, name, err := namedCaller(ctx)
	if err == nil {
		id, err = g.auth.KnownMember(id, name)
	}
	if err != nil {
		g.refused(remote, "", "refused a peer call: it names no current member", "member_id", memberID(id), "member_name", strconv.Quote(name), "err", err)
		return PeerCall{}, err
	}
	return PeerCall{ID: id}, nil
}

// namedCaller reads the member a peer call without certificate names: an
// id, a name, or both.
func namedCaller(ctx context.Context) (id uint64, name string, err error) {
	if v := metadata.ValueFromIncomingContext(ctx, PeerMemberIDKey); len(v) == 1 {
		if id, err = strconv.ParseUint(v[0], 16, 64); err != nil || id == 0 {
			return 0, "", fmt.Errorf("%w: member id %q is not one", ErrNotMember, v[0])
		}
	}
	if v := metadata.ValueFromIncomingContext(ctx, PeerMemberNameKey); len(v) == 1 {
		name = v[0]
	}
	if id == 0 && name == "" {
		return 0, "", fmt.Errorf("%w: the call names no member (%s or %s)", ErrNotMember, PeerMemberIDKey, PeerMemberNameKey)
	}
	return id, name, nil
}

// sentAs checks that a snapshot whose MsgSnap says it comes from member
// from came on a connection of that member (call, from Caller).
func (g *PeerGate) sentAs(ctx context.Context, call PeerCall, from uint64) error {
	if g == nil || call.ID == from {
		return nil
	}
	err := fmt.Errorf("%w: a snapshot of member %s on a connection of member %s", ErrWrongSender, FormatID(from), FormatID(call.ID))
	g.refused(remoteOf(ctx), "", "refused a snapshot sent as another member", "err", err)
	return err
}

// remoteOf is the address the gRPC call of ctx came from.
func remoteOf(ctx context.Context) string {
	if p, ok := grpcpeer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return "unknown"
}

// streamPeer is who a log stream comes from: the member id it is bound to
// (0 until its first message binds it, without a certificate) and whether
// a certificate proved it (or a nil gate trusts it).
type streamPeer struct {
	id        uint64
	certified bool
}

// bindStream binds a log stream from remote to the sender of its first
// message m, on node n: with a certificate, m must come From the member
// the certificate identifies; without, From must be a current member (or
// a removed one, which the stream then tells so). It logs and reports
// false when the stream must be closed.
func (g *PeerGate) bindStream(n LocalNode, p *streamPeer, m *raftpb.Message, remote string) bool {
	from := m.GetFrom()
	switch {
	case p.id != 0:
		return g.sentBy(p, m, remote)
	case g == nil:
		p.id = from
		return true
	case n == nil:
		return false // no node yet: the dialer opens the stream again later
	}
	if at, _ := n.PeerRemoved(from); at != 0 {
		p.id = from // receive answers that it was removed
		return true
	}
	if _, err := g.auth.KnownMember(from, ""); err != nil {
		g.refused(remote, "", "refused a log stream: its first message does not come from a member this member knows", "from", memberID(from), "type", m.GetType().String(), "err", err)
		return false
	}
	p.id = from
	return true
}

// sentBy reports whether m comes From the member stream p is bound to;
// one that does not is logged (rate-limited) and its stream closed.
func (g *PeerGate) sentBy(p *streamPeer, m *raftpb.Message, remote string) bool {
	if m.GetFrom() == p.id {
		return true
	}
	if g == nil {
		g = &PeerGate{log: slog.New(slog.DiscardHandler)}
	}
	how := "the stream's first message"
	if p.certified {
		how = "its certificate"
	}
	err := fmt.Errorf("%w: a log stream of member %s (by %s) sends a %v as member %s", ErrWrongSender, FormatID(p.id), how, m.GetType(), FormatID(m.GetFrom()))
	g.refused(remote, "", "refused a log stream: it sent a message as another member; closed", "err", err)
	return false
}

// refused logs a refusal of a peer at remote at WARN, at most once per
// peerRefusalLogEvery for one source host, message and certificate
// subject ("" for a peer without one), the repeats at DEBUG.
func (g *PeerGate) refused(remote, subject, msg string, args ...any) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	args = append([]any{"remote", remote}, args...)
	if subject != "" {
		args = append(args, "subject", subject)
	}
	if g.limit.loud(host+" "+msg+" "+subject, peerRefusalLogEvery, time.Now()) {
		g.log.Warn(msg, args...)
	} else {
		g.log.Debug(msg, args...)
	}
}
