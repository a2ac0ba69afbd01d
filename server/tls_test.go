package server

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

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var testSerial = big.NewInt(1)

func nextSerial() *big.Int {
	testSerial = new(big.Int).Add(testSerial, big.NewInt(1))
	return testSerial
}

func newTestCA(t testing.TB, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a certificate for cn valid for both server (127.0.0.1) and
// client use, between notBefore and notAfter, and returns its PEM and key PEM.
func (ca *testCA) issue(t testing.TB, cn string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// issueFiles writes issue's output to dir/name.crt and dir/name.key.
func (ca *testCA) issueFiles(t testing.TB, dir, name, cn string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	c, k := ca.issue(t, cn, notBefore, notAfter)
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writeTestFile(t, certFile, c)
	writeTestFile(t, keyFile, k)
	return certFile, keyFile
}

func writeTestFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func valid() (time.Time, time.Time) { return time.Now().Add(-time.Hour), time.Now().Add(time.Hour) }

func TestCertReloaderPicksUpChangedFiles(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "ca")
	nb, na := valid()
	certFile, keyFile := ca.issueFiles(t, dir, "srv", "first", nb, na)
	caFile := filepath.Join(dir, "ca.crt")
	writeTestFile(t, caFile, ca.pem)
	r, err := newCertReloader("client", certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	cert, pool := r.current()
	if cert.Leaf.Subject.CommonName != "first" || pool == nil {
		t.Fatalf("loaded %q", cert.Leaf.Subject.CommonName)
	}

	// A new pair on disk, with a later mtime: picked up at the next look
	// after the check interval, without a signal.
	ca.issueFiles(t, dir, "srv", "second", nb, na)
	later := time.Now().Add(time.Minute)
	os.Chtimes(certFile, later, later)
	os.Chtimes(keyFile, later, later)
	r.mu.Lock()
	r.lastCheck = time.Time{}
	r.mu.Unlock()
	if cert, _ := r.current(); cert.Leaf.Subject.CommonName != "second" {
		t.Fatalf("after a file change: %q, want second", cert.Leaf.Subject.CommonName)
	}

	// A broken file keeps the working pair and reports the error.
	var reported error
	r.onError = func(err error) { reported = err }
	writeTestFile(t, keyFile, []byte("garbage"))
	evenLater := later.Add(time.Minute)
	os.Chtimes(keyFile, evenLater, evenLater)
	r.mu.Lock()
	r.lastCheck = time.Time{}
	r.mu.Unlock()
	if cert, _ := r.current(); cert.Leaf.Subject.CommonName != "second" || reported == nil {
		t.Fatalf("after a broken key: %q, error %v", cert.Leaf.Subject.CommonName, reported)
	}
	if err := r.Reload(); err == nil {
		t.Fatal("explicit Reload of a broken key: no error")
	}

	// SIGHUP's path: an explicit Reload.
	ca.issueFiles(t, dir, "srv", "third", nb, na)
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if cert, _ := r.current(); cert.Leaf.Subject.CommonName != "third" {
		t.Fatalf("after Reload: %q", cert.Leaf.Subject.CommonName)
	}
}

func TestPeerTLSRefusesForeignCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, foreign := newTestCA(t, "cluster"), newTestCA(t, "foreign")
	nb, na := valid()
	caFile := filepath.Join(dir, "ca.crt")
	writeTestFile(t, caFile, ca.pem)
	sc, sk := ca.issueFiles(t, dir, "srv", "n1", nb, na)
	srv, err := newCertReloader("peer", sc, sk, caFile)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", srv.serverConfig(tls.RequireAndVerifyClientCert))
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Write([]byte("x")); c.Close() }()
		}
	}()
	dial := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp", lis.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		// TLS 1.3: a refused client certificate shows on the first read.
		_, err = c.Read(make([]byte, 1))
		return err
	}
	good, _ := ca.issueFiles(t, dir, "good", "n2", nb, na)
	goodR, err := newCertReloader("peer", good, filepath.Join(dir, "good.key"), caFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := goodR.clientConfig()
	cfg.ServerName = "127.0.0.1"
	if err := dial(cfg); err != nil {
		t.Fatalf("member of the cluster: %v", err)
	}

	fc, fk := foreign.issueFiles(t, dir, "bad", "intruder", nb, na)
	badR, err := newCertReloader("peer", fc, fk, caFile) // trusts the cluster CA, but its cert is foreign
	if err != nil {
		t.Fatal(err)
	}
	cfg = badR.clientConfig()
	cfg.ServerName = "127.0.0.1"
	if err := dial(cfg); err == nil {
		t.Fatal("a foreign certificate was accepted by the peer listener")
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	if err := dial(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err == nil {
		t.Fatal("a client without a certificate was accepted by the peer listener")
	}
}
