package api

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/member"
)

// The peer port trusts members only (member.peerTrust, raftlog.PeerGate):
// with authentication on, serve refuses to start without peer mutual TLS
// unless insecure_peer says to (validatePeerTrust). A member started with
// --join makes its first call, ListMembers, on the client port of the
// member it joins; with client TLS it presents its peer certificate, which
// the client port accepts for ListMembers alone when it is signed by the
// peer CA and identifies a current member (the one `cluster add` just
// added): client and peer certificates never need one CA, and no
// certificate needs a role for it.

// listMembersMethod is the only method a joining member's peer certificate
// may call on the client port.
const listMembersMethod = "/metalog.v1.MetadataService/ListMembers"

// errInsecurePeer is the refusal to start with authentication on and a
// peer port without mutual TLS.
var errInsecurePeer = errors.New("config: authentication is on, but the peer port has no mutual TLS")

// insecurePeer reports whether the peer port has no TLS while clients
// must authenticate, as insecure_peer allows.
func (c *Config) insecurePeer() bool {
	return c.authEnabled() && !c.peerTLS() && c.InsecurePeer
}

// validatePeerTrust refuses authentication without peer mutual TLS,
// unless insecure_peer is set: anyone who could connect to the peer port
// could act as a member, past every check of the client port.
func (c *Config) validatePeerTrust() error {
	if !c.authEnabled() || c.peerTLS() || c.InsecurePeer {
		return nil
	}
	return fmt.Errorf("%w (peer_addr %s): anyone who can connect to it can act as a member, applying schema changes past authentication, roles and limits, "+
		"reading every keyspace's history and disrupting the cluster; set peer_cert_file, peer_key_file and peer_ca_file (--peer-cert-file, --peer-key-file, --peer-ca-file), "+
		"or pass --insecure-peer (insecure_peer: true) to run so anyway", errInsecurePeer, c.PeerAddr)
}

// logInsecurePeer says at start-up, at WARN, that the peer port has no TLS
// while clients must authenticate.
func logInsecurePeer(cfg *Config, logger *slog.Logger) {
	if cfg.insecurePeer() {
		logger.Warn(member.InsecurePeerWarning, "peer_addr", cfg.PeerAddr)
	}
}

// memberCertificates identifies the members of the cluster by their peer
// certificates, for the authenticator: the peer CA that signs them, and
// the member that says which current member one names.
type memberCertificates struct {
	peerCAs *certReloader  // the peer CA pool
	member  *member.Member // set once the member started, before serving
}

// identity returns the identity of a client certificate chain that is a
// current member's peer certificate ("member:NAME", which may only list
// the members), and false when it is not one.
func (mc *memberCertificates) identity(chain []*x509.Certificate) (identity, bool) {
	if mc == nil || mc.peerCAs == nil || mc.member == nil {
		return identity{}, false
	}
	_, pool := mc.peerCAs.current()
	if err := verifyChain(chain, pool, "", x509.ExtKeyUsageClientAuth); err != nil {
		return identity{}, false
	}
	name, err := mc.member.CertificateMemberName(chain[0])
	if err != nil {
		return identity{}, false
	}
	return identity{name: "member:" + name, joining: true}, true
}

// certCredential is the identity a client certificate chain gives: a
// client certificate of the client CA with roles (certIdentity), or else a
// current member's peer certificate (which may only list the members), or
// else a client certificate without roles. Without a client CA a
// certificate that is none of these is not a credential (nil, no error):
// the listener asked for one only for joining members.
func (a *authenticator) certCredential(chain []*x509.Certificate) (*identity, error) {
	id, err := a.certIdentity(chain)
	if err == nil && len(id.grants) > 0 {
		return &id, nil
	}
	if mid, ok := a.members.identity(chain); ok {
		return &mid, nil
	}
	switch {
	case err == nil:
		return &id, nil
	case a.clientCAs == nil:
		return nil, nil
	}
	return nil, err
}

// authorizeJoining lets a joining member's peer certificate (id) call
// ListMembers and nothing else.
func (a *authenticator) authorizeJoining(ctx context.Context, method string, id identity) (context.Context, error) {
	if method != listMembersMethod {
		if a.onRefusal != nil {
			a.onRefusal(method, id.name)
		}
		return ctx, status.Errorf(codes.PermissionDenied, "%s: %s presents a member's peer certificate, which may only list the members (to join); use a token or a client certificate",
			shortMethod(method), id.name)
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}
