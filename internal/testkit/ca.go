package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority made for one test. Its certificate is
// written to File in Dir, a directory of the test's own, where IssueFiles
// writes the certificates it issues too.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte // Cert, PEM encoded
	Dir  string // a t.TempDir() of the CA's files
	File string // Dir/ca.crt: PEM
}

// NewCA makes a CA named cn, valid from an hour ago to a day from now,
// and writes its certificate to ca.File.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := &CA{Cert: cert, Key: key, PEM: pemBlock("CERTIFICATE", der), Dir: dir, File: filepath.Join(dir, "ca.crt")}
	WriteFile(t, ca.File, ca.PEM)
	return ca
}

// Pool is a certificate pool that trusts the CA only.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Cert is a certificate a CA issued, with its private key.
type Cert struct {
	TLS     tls.Certificate // with Leaf set
	CertPEM []byte
	KeyPEM  []byte // "EC PRIVATE KEY"
}

// CertOption changes a certificate before the CA signs it.
type CertOption func(*x509.Certificate)

// Valid makes a certificate valid from notBefore to notAfter.
func Valid(notBefore, notAfter time.Time) CertOption {
	return func(c *x509.Certificate) { c.NotBefore, c.NotAfter = notBefore, notAfter }
}

// Usage sets a certificate's extended key usages (none: nil).
func Usage(usages ...x509.ExtKeyUsage) CertOption {
	return func(c *x509.Certificate) { c.ExtKeyUsage = usages }
}

// ServerOnly is Usage(x509.ExtKeyUsageServerAuth).
func ServerOnly() CertOption { return Usage(x509.ExtKeyUsageServerAuth) }

// ClientOnly is Usage(x509.ExtKeyUsageClientAuth).
func ClientOnly() CertOption { return Usage(x509.ExtKeyUsageClientAuth) }

// Hosts sets a certificate's subject alternative names: each host that
// parses as an IP address is one, any other a DNS name.
func Hosts(hosts ...string) CertOption {
	return func(c *x509.Certificate) {
		c.IPAddresses, c.DNSNames = nil, nil
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				c.IPAddresses = append(c.IPAddresses, ip)
			} else {
				c.DNSNames = append(c.DNSNames, h)
			}
		}
	}
}

// Edit changes the certificate's template as edit says.
func Edit(edit func(*x509.Certificate)) CertOption { return edit }

// Issue signs a certificate for cn. Unless opts say otherwise, it is a
// peer's: good as a server and as a client, for 127.0.0.1, ::1 and
// localhost, valid from an hour ago to an hour from now.
func (ca *CA) Issue(t testing.TB, cn string, opts ...CertOption) *Cert {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	Hosts("127.0.0.1", "::1", "localhost")(tmpl)
	for _, o := range opts {
		o(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{
		TLS:     tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("EC PRIVATE KEY", kder),
	}
}

// IssueFiles is Issue, written to name.crt and name.key in ca.Dir (over
// any files of that name).
func (ca *CA) IssueFiles(t testing.TB, name, cn string, opts ...CertOption) (certFile, keyFile string) {
	t.Helper()
	c := ca.Issue(t, cn, opts...)
	certFile, keyFile = filepath.Join(ca.Dir, name+".crt"), filepath.Join(ca.Dir, name+".key")
	WriteFile(t, certFile, c.CertPEM)
	WriteFile(t, keyFile, c.KeyPEM)
	return certFile, keyFile
}

// ClientTLS trusts the CA only and presents cert (none when nil).
func (ca *CA) ClientTLS(cert *Cert) *tls.Config {
	cfg := &tls.Config{RootCAs: ca.Pool()}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{cert.TLS}
	}
	return cfg
}

// ServerTLS presents cert and requires a client certificate of the CA:
// the peer port's mutual TLS.
func (ca *CA) ServerTLS(cert *Cert) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert.TLS}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}
}

// FileClientTLS trusts the CA only and, when name is not empty, presents
// the certificate IssueFiles wrote as name, loaded from its files.
func (ca *CA) FileClientTLS(t testing.TB, name string) *tls.Config {
	t.Helper()
	cfg := &tls.Config{RootCAs: ca.Pool()}
	if name != "" {
		pair, err := tls.LoadX509KeyPair(filepath.Join(ca.Dir, name+".crt"), filepath.Join(ca.Dir, name+".key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// WriteFile writes data to path, readable by its owner only, failing t
// on error.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// serial is a random serial number: certificates of one CA never share
// one, whichever test made them.
func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n.Add(n, big.NewInt(1))
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
