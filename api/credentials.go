package api

import (
	"crypto/x509"
	"errors"

	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
)

// Credentials checks the credentials of a client that does not speak
// gRPC or HTTP (package cqlserver's connections) with the same rules,
// tokens and certificates as the RPCs: one authenticator for every
// listener, so that a token or certificate means the same on each.
type Credentials struct {
	a *authenticator
}

// NewCredentials returns the credential checker of opts, which must have
// authentication on (opts.Enabled).
func NewCredentials(opts AuthOptions) *Credentials {
	return &Credentials{a: newAuthenticator(opts)}
}

// Identify returns who a client is and what it holds: its principal
// ("token:NAME" or "cert:CN") and grants, from its TLS client
// certificate chain (leaf first, as the TLS handshake verified it; nil:
// none) and a bearer token ("": none). A token, if sent, wins over the
// certificate, which must still be valid, as for the RPCs. A member's
// peer certificate is no credential here: it may only list the members,
// which this path does not offer. The error says why the credentials
// are refused, in the words the RPCs use.
func (c *Credentials) Identify(chain []*x509.Certificate, token string) (principal string, grants access.Grants, err error) {
	var auth []string
	if token != "" {
		auth = []string{"Bearer " + token}
	}
	id, err := c.a.identify(chain, auth)
	switch {
	case err != nil:
		return "", nil, errors.New(status.Convert(err).Message())
	case id.joining:
		return "", nil, errors.New(id.name + " presents a member's peer certificate, which may only list the members (to join); use a token or a client certificate")
	}
	return id.name, id.grants, nil
}
