package testkit

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// handshake runs a TLS handshake between server and client over a pipe
// and returns the client's error, or the server's.
func handshake(server, client *tls.Config) error {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	deadline := time.Now().Add(10 * time.Second)
	a.SetDeadline(deadline)
	b.SetDeadline(deadline)
	errc := make(chan error, 1)
	go func() {
		err := tls.Server(a, server).Handshake()
		if err != nil {
			a.Close() // the client waits for no more
		}
		errc <- err
	}()
	cerr := tls.Client(b, client).Handshake()
	if cerr != nil {
		b.Close()
	} else {
		go io.Copy(io.Discard, b) // the server's alert, if it refuses
	}
	serr := <-errc
	if cerr != nil {
		return cerr
	}
	return serr
}

// TestIssuedPeersTrustEachOther: two peer certificates of one CA make a
// mutual TLS handshake for each of 127.0.0.1, ::1 and localhost; a
// certificate of another CA, none, and a server certificate for another
// host fail.
func TestIssuedPeersTrustEachOther(t *testing.T) {
	ca, other := NewCA(t, "cluster"), NewCA(t, "other")
	srv, cli := ca.Issue(t, "n1"), ca.Issue(t, "n2")
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		cfg := ca.ClientTLS(cli)
		cfg.ServerName = host
		if err := handshake(ca.ServerTLS(srv), cfg); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	for name, tc := range map[string]struct {
		server *Cert
		client *tls.Config
	}{
		"client of another CA":           {srv, ca.ClientTLS(other.Issue(t, "n2"))},
		"no client certificate":          {srv, ca.ClientTLS(nil)},
		"server for another host":        {ca.Issue(t, "n1", Hosts("n1.example")), ca.ClientTLS(cli)},
		"client certificate as a server": {ca.Issue(t, "n1", ClientOnly()), ca.ClientTLS(cli)},
	} {
		tc.client.ServerName = "127.0.0.1"
		if err := handshake(ca.ServerTLS(tc.server), tc.client); err == nil {
			t.Errorf("%s: the handshake succeeded", name)
		}
	}
}

// TestIssueOptions: the options set the validity, usages and names, and
// each certificate has a serial of its own.
func TestIssueOptions(t *testing.T) {
	ca := NewCA(t, "ca")
	nb, na := time.Now().Add(-50*time.Minute).Truncate(time.Second), time.Now().Add(-40*time.Minute).Truncate(time.Second)
	c := ca.Issue(t, "old", Valid(nb, na), ServerOnly(), Hosts("10.0.0.1", "n1.example")).TLS.Leaf
	if !c.NotBefore.Equal(nb) || !c.NotAfter.Equal(na) || len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth ||
		len(c.IPAddresses) != 1 || c.IPAddresses[0].String() != "10.0.0.1" || len(c.DNSNames) != 1 || c.DNSNames[0] != "n1.example" {
		t.Errorf("issued %v..%v usages %v IPs %v names %v", c.NotBefore, c.NotAfter, c.ExtKeyUsage, c.IPAddresses, c.DNSNames)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), CurrentTime: nb.Add(time.Minute)}); err != nil {
		t.Errorf("verify within its validity: %v", err)
	}
	e := ca.Issue(t, "edited", Edit(func(c *x509.Certificate) { c.Subject.Organization = []string{"org"} })).TLS.Leaf
	if e.Subject.Organization[0] != "org" || e.SerialNumber.Cmp(c.SerialNumber) == 0 {
		t.Errorf("edited: %v, serial %v (other %v)", e.Subject, e.SerialNumber, c.SerialNumber)
	}
}

// TestIssueFiles: the CA's file and the issued pair load as a client
// configuration that trusts the CA.
func TestIssueFiles(t *testing.T) {
	ca := NewCA(t, "clients")
	certFile, keyFile := ca.IssueFiles(t, "app", "app")
	if !strings.HasPrefix(certFile, ca.Dir) || !strings.HasSuffix(keyFile, "app.key") {
		t.Errorf("files %s %s, want app.crt and app.key in %s", certFile, keyFile, ca.Dir)
	}
	if b, err := os.ReadFile(ca.File); err != nil || string(b) != string(ca.PEM) {
		t.Errorf("CA file: %v", err)
	}
	cfg := ca.FileClientTLS(t, "app")
	if len(cfg.Certificates) != 1 || cfg.RootCAs == nil {
		t.Fatalf("config %+v", cfg)
	}
	srv := ca.Issue(t, "srv")
	cfg.ServerName = "localhost"
	if err := handshake(ca.ServerTLS(srv), cfg); err != nil {
		t.Error(err)
	}
	if cfg := ca.FileClientTLS(t, ""); len(cfg.Certificates) != 0 {
		t.Errorf("no name: %d certificates", len(cfg.Certificates))
	}
}
