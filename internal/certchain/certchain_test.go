package certchain

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"
)

// issue makes a certificate for cn with usage, signed by parent (self
// signed, as a CA, when parent is nil).
func issue(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames: []string{cn},
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = nil
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestVerify: a chain of the pool's CA passes for its usage and host;
// another CA's, the wrong usage, the wrong host and no chain at all fail.
func TestVerify(t *testing.T) {
	ca, caKey := issue(t, "ca", nil, nil, 0)
	other, otherKey := issue(t, "other", nil, nil, 0)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	client, _ := issue(t, "app", ca, caKey, x509.ExtKeyUsageClientAuth)
	srv, _ := issue(t, "n1.example", ca, caKey, x509.ExtKeyUsageServerAuth)
	foreign, _ := issue(t, "app", other, otherKey, x509.ExtKeyUsageClientAuth)
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
