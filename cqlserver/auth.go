package cqlserver

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// Authenticator checks the credentials of a connection when
// authentication is on; *api.Credentials implements it, so that a token
// or a client certificate means on the CQL listener what it means on the
// gRPC and HTTP ones. Identify is called from many connections'
// goroutines at once.
type Authenticator interface {
	// Identify returns the principal ("token:NAME", "cert:CN") and the
	// grants of a client from its verified TLS client certificate chain
	// (nil: none) and a bearer token ("": none), or why they are refused.
	Identify(chain []*x509.Certificate, token string) (principal string, grants access.Grants, err error)
}

// passwordAuthenticator is the authenticator AUTHENTICATE names: drivers
// answer it with SASL PLAIN, whose password metalog reads as a bearer
// token.
const passwordAuthenticator = "org.apache.cassandra.auth.PasswordAuthenticator"

// anonymous is the principal of a connection when authentication is off,
// as the API records it.
const anonymous = "anonymous"

// session is who a connection's requests run as: set once, by STARTUP
// when authentication is off or a client certificate identifies the
// client, else by a successful AUTH_RESPONSE.
type session struct {
	authed    bool
	principal string
	// grants is what the principal holds; nil when authentication is off
	// (no check).
	grants access.Grants
}

// begin starts the session of a connection at STARTUP, with auth (nil:
// authentication off) and the connection's client certificate chain. It
// reports whether the session is authenticated (STARTUP is answered
// READY): authentication is off, or the certificate identifies a client
// holding a role; else STARTUP is answered AUTHENTICATE.
func (s *session) begin(auth Authenticator, chain []*x509.Certificate) bool {
	if auth == nil {
		*s = session{authed: true, principal: anonymous}
		return true
	}
	if len(chain) == 0 {
		return false
	}
	principal, grants, err := auth.Identify(chain, "")
	if err != nil || len(grants) == 0 {
		return false // a token may still identify the client
	}
	*s = session{authed: true, principal: principal, grants: grants}
	return true
}

// authResponse answers AUTH_RESPONSE: AUTH_SUCCESS when its SASL PLAIN
// password is a token the server knows (or the client certificate
// identifies the client and no password is sent) and the identity holds a
// role, else an authentication error, after which the client may try
// again.
func (c *conn) authResponse(f wire.Frame, m *wire.AuthResponse) *pending {
	user, password, err := saslPlain(m.Token)
	if err != nil {
		return c.errorf(f, wire.CodeAuthentication, "%v", err)
	}
	principal, grants, err := c.srv.cfg.Authenticator.Identify(peerCertificates(c.nc), password)
	if err == nil && len(grants) == 0 {
		err = errors.New(principal + " holds no role (grant it reader, ddl or operator)")
	}
	if err != nil {
		c.srv.cfg.Logger.Info("cql connection: authentication refused", "remote", c.nc.RemoteAddr().String(),
			"username", clipText(user), "err", err)
		return c.errorf(f, wire.CodeAuthentication, "authentication refused: %v", err)
	}
	c.session = session{authed: true, principal: principal, grants: grants}
	return c.reply(f, &wire.AuthSuccess{}, nil)
}

// saslPlain splits a SASL PLAIN message (RFC 4616: authzid NUL authcid
// NUL passwd) into its user and password.
func saslPlain(token []byte) (user, password string, err error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return "", "", errors.New("the AUTH_RESPONSE is not SASL PLAIN (authzid NUL username NUL password): send a username and, as password, a metalog token")
	}
	return string(parts[1]), string(parts[2]), nil
}

// peerCertificates is the client certificate chain the TLS handshake of
// nc received, nil without TLS or without a certificate.
func peerCertificates(nc net.Conn) []*x509.Certificate {
	tc, ok := nc.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return nil
	}
	return tc.ConnectionState().PeerCertificates
}

// visible is the filter of the keyspaces the connection may read, for
// the member's reads and feed: nil (every keyspace) when authentication
// is off or the principal holds reader unscoped. A keyspace it does not
// cover does not exist for the connection.
func (s *session) visible() func(keyspace string) bool {
	if s.grants == nil {
		return nil
	}
	return s.grants.Visible(access.Reader)
}

// usable reports whether the connection may name keyspace in USE: it may
// read it or change it.
func (s *session) usable(keyspace string) bool {
	return s.grants == nil || s.grants.Allows(access.Reader, keyspace) || s.grants.Allows(access.DDL, keyspace)
}

// ddlRefusal is why the connection may not run DDL at all, "" when it
// may: it must hold ddl for some keyspace, and the member checks each
// statement's keyspace against the grants. The words are the API's.
func (s *session) ddlRefusal() string {
	if s.grants == nil || s.grants.Has(access.DDL) {
		return ""
	}
	return "Execute needs role ddl; " + s.principal + " has " + s.grants.Held()
}
