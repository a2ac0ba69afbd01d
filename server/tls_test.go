package server

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
)

func TestCertReloaderPicksUpChangedFiles(t *testing.T) {
	ca := testkit.NewCA(t, "ca")
	certFile, keyFile := ca.IssueFiles(t, "srv", "first")
	caFile := ca.File
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
	ca.IssueFiles(t, "srv", "second")
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
	testkit.WriteFile(t, keyFile, []byte("garbage"))
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
	ca.IssueFiles(t, "srv", "third")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if cert, _ := r.current(); cert.Leaf.Subject.CommonName != "third" {
		t.Fatalf("after Reload: %q", cert.Leaf.Subject.CommonName)
	}
}

func TestPeerTLSRefusesForeignCertificates(t *testing.T) {
	ca, foreign := testkit.NewCA(t, "cluster"), testkit.NewCA(t, "foreign")
	caFile := ca.File
	sc, sk := ca.IssueFiles(t, "srv", "n1")
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
	good, goodKey := ca.IssueFiles(t, "good", "n2")
	goodR, err := newCertReloader("peer", good, goodKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := goodR.clientConfig()
	cfg.ServerName = "127.0.0.1"
	if err := dial(cfg); err != nil {
		t.Fatalf("member of the cluster: %v", err)
	}

	fc, fk := foreign.IssueFiles(t, "bad", "intruder")
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
	pool.AddCert(ca.Cert)
	if err := dial(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err == nil {
		t.Fatal("a client without a certificate was accepted by the peer listener")
	}
}
