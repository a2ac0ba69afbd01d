package api

import (
	"crypto/x509"
	"strings"
	"testing"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/internal/testkit"
)

// staticTokens is a Tokens of one token.
type staticTokens struct{ token, name string }

func (s staticTokens) Lookup(token string) (string, access.Grants, bool) {
	if token != s.token {
		return "", nil, false
	}
	return s.name, access.Grants{{Role: access.DDL}}, true
}

// TestCredentialsIdentify: Identify takes a token, a client certificate
// with roles, and refuses an unknown token and a member's peer
// certificate, whatever it may do on the gRPC port.
func TestCredentialsIdentify(t *testing.T) {
	clients, peers := testkit.NewCA(t, "clients"), testkit.NewCA(t, "peers")
	c := NewCredentials(AuthOptions{
		Enabled:    true,
		Tokens:     staticTokens{token: "s3cret", name: "ci"},
		ClientCAs:  clients.Pool,
		CertRoles:  map[string]access.Grants{"app": {{Role: access.Reader}}},
		PeerCAs:    peers.Pool,
		MemberName: func(*x509.Certificate) (string, error) { return "n2", nil },
	})
	chain := func(ca *testkit.CA, cn string) []*x509.Certificate {
		return []*x509.Certificate{ca.Issue(t, cn).TLS.Leaf}
	}
	for _, tc := range []struct {
		name      string
		chain     []*x509.Certificate
		token     string
		principal string
		grants    string
		err       string
	}{
		{"token", nil, "s3cret", "token:ci", "ddl", ""},
		{"certificate", chain(clients, "app"), "", "cert:app", "reader", ""},
		{"token over certificate", chain(clients, "app"), "s3cret", "token:ci", "ddl", ""},
		{"unknown token", nil, "nope", "", "", "bearer token refused: unknown token"},
		{"nothing", nil, "", "", "", "authentication required"},
		{"member's peer certificate", chain(peers, "n2"), "", "", "", "member:n2 presents a member's peer certificate"},
	} {
		principal, grants, err := c.Identify(tc.chain, tc.token)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || principal != tc.principal || grants.String() != tc.grants {
			t.Errorf("%s: %q %q %v, want %q %q", tc.name, principal, grants, err, tc.principal, tc.grants)
		}
	}
}
