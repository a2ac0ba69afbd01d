package certchain

import (
	"crypto/x509"
	"testing"

	"github.com/metalog/metalog/internal/testkit"
)

// TestVerify: a chain of the pool's CA passes for its usage and host;
// another CA's, the wrong usage, the wrong host and no chain at all fail.
func TestVerify(t *testing.T) {
	ca, other := testkit.NewCA(t, "ca"), testkit.NewCA(t, "other")
	pool := ca.Pool()
	client := ca.Issue(t, "app", testkit.ClientOnly(), testkit.Hosts("app")).TLS.Leaf
	srv := ca.Issue(t, "n1.example", testkit.ServerOnly(), testkit.Hosts("n1.example")).TLS.Leaf
	foreign := other.Issue(t, "app", testkit.ClientOnly(), testkit.Hosts("app")).TLS.Leaf
	for _, tc := range []struct {
		name  string
		chain []*x509.Certificate
		host  string
		usage x509.ExtKeyUsage
		ok    bool
	}{
		{"client of the CA", []*x509.Certificate{client}, "", x509.ExtKeyUsageClientAuth, true},
		{"server of the CA for its host", []*x509.Certificate{srv}, "n1.example", x509.ExtKeyUsageServerAuth, true},
		{"server for another host", []*x509.Certificate{srv}, "n2.example", x509.ExtKeyUsageServerAuth, false},
		{"client used as a server", []*x509.Certificate{client}, "", x509.ExtKeyUsageServerAuth, false},
		{"another CA's", []*x509.Certificate{foreign}, "", x509.ExtKeyUsageClientAuth, false},
		{"no chain", nil, "", x509.ExtKeyUsageClientAuth, false},
	} {
		if err := Verify(tc.chain, pool, tc.host, tc.usage); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
