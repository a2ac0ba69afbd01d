package api

import (
	"context"
	"crypto/x509"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/internal/certchain"
)

// The peer port trusts members only (member.peerTrust, raftlog.PeerGate):
// with authentication on, package server refuses to start without peer
// mutual TLS unless insecure_peer says to. A member started with
// --join makes its first call, ListMembers, on the client port of the
// member it joins; with client TLS it presents its peer certificate, which
// the client port accepts for ListMembers alone when it is signed by the
// peer CA and identifies a current member (the one `cluster add` just
// added): client and peer certificates never need one CA, and no
// certificate needs a role for it.

// listMembersMethod is the only method a joining member's peer certificate
// may call on the client port.
const listMembersMethod = "/metalog.v1.MetadataService/ListMembers"

// memberCertificates identifies the members of the cluster by their peer
// certificates, for the authenticator: the peer CA that signs them, and
// the member that says which current member one names.
type memberCertificates struct {
	peerCAs func() *x509.CertPool                        // the peer CA pool as of now
	name    func(cert *x509.Certificate) (string, error) // the current member a peer certificate names
}

// identity returns the identity of a client certificate chain that is a
// current member's peer certificate ("member:NAME", which may only list
// the members), and false when it is not one.
func (mc *memberCertificates) identity(chain []*x509.Certificate) (identity, bool) {
	if mc == nil {
		return identity{}, false
	}
	if err := certchain.Verify(chain, mc.peerCAs(), "", x509.ExtKeyUsageClientAuth); err != nil {
		return identity{}, false
	}
	name, err := mc.name(chain[0])
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
