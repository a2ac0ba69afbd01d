package member

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/metalog/metalog/raftlog"
)

// TestCertificateMember: a certificate identifies the one current member
// whose name it carries (subject CN or DNS SAN) together with the host of
// its peer address (IP or DNS SAN); none, several, or this member itself
// identify no member.
func TestCertificateMember(t *testing.T) {
	members := map[uint64]memberInfo{
		1: {Name: "n1", PeerAddr: "127.0.0.1:7071"},
		2: {Name: "n2", PeerAddr: "10.0.0.2:7071"},
		3: {Name: "n3", PeerAddr: "db3.example.com:7071"},
		4: {Name: "db4.example.com", PeerAddr: "db4.example.com:7071"},
		5: {Name: "n5", PeerAddr: "[::1]:7071"},
		6: {Name: "n6", PeerAddr: "127.0.0.1:7072"}, // shares n1's host
	}
	ip := func(s ...string) []net.IP {
		var out []net.IP
		for _, a := range s {
			out = append(out, net.ParseIP(a))
		}
		return out
	}
	cert := func(cn string, dns []string, ips []net.IP) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: dns, IPAddresses: ips}
	}
	for _, tc := range []struct {
		name string
		cert *x509.Certificate
		want uint64
		err  string
	}{
		{"CN and IP", cert("n2", nil, ip("10.0.0.2")), 2, ""},
		{"DNS SAN name and IP", cert("someone", []string{"n2"}, ip("10.0.0.2")), 2, ""},
		{"CN and DNS host", cert("n3", []string{"db3.example.com"}, nil), 3, ""},
		{"wildcard host", cert("n3", []string{"*.example.com"}, nil), 3, ""},
		{"the name is the host", cert("x", []string{"db4.example.com"}, nil), 4, ""},
		{"IPv6", cert("n5", nil, ip("::1")), 5, ""},
		{"the host, another name", cert("n3", nil, ip("10.0.0.2")), 0, "names no current member"},
		{"the name, another host", cert("n2", nil, ip("10.0.0.9")), 0, "names no current member"},
		{"no SAN", cert("n2", nil, nil), 0, "names no current member"},
		{"an intruder", cert("intruder", nil, nil), 0, "names no current member"},
		{"CN and IP only count with the name", cert("127.0.0.1", nil, ip("127.0.0.1")), 0, "names no current member"},
		{"two members", cert("n6", []string{"n1"}, ip("127.0.0.1")), 0, "names 2 members (n1 (127.0.0.1:7071), n6 (127.0.0.1:7072))"},
		{"this member", cert("n1", nil, ip("127.0.0.1")), 0, "names this member itself (n1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := certificateMember(tc.cert, members, 1, "n1")
			switch {
			case tc.err == "" && (err != nil || got != tc.want):
				t.Fatalf("got %d, %v; want member %d", got, err, tc.want)
			case tc.err != "" && (err == nil || !errors.Is(err, raftlog.ErrNotMember) || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %d, %v; want ErrNotMember saying %q", got, err, tc.err)
			}
		})
	}
}

// TestKnownMember: without a certificate a peer names a current member by
// id or name; a name given with an id must be that member's, and this
// member itself is never another's.
func TestKnownMember(t *testing.T) {
	members := map[uint64]memberInfo{1: {Name: "n1"}, 2: {Name: "n2"}, 3: {Name: "n3"}}
	for _, tc := range []struct {
		id   uint64
		name string
		want uint64
	}{
		{2, "", 2},
		{0, "n3", 3},
		{3, "n3", 3},
		{3, "n2", 0},
		{9, "", 0},
		{0, "n9", 0},
		{0, "", 0},
		{1, "", 0},
		{0, "n1", 0},
	} {
		got, err := knownMember(tc.id, tc.name, members, 1)
		if got != tc.want || (tc.want == 0) != errors.Is(err, raftlog.ErrNotMember) {
			t.Errorf("knownMember(%d, %q) = %d, %v; want %d", tc.id, tc.name, got, err, tc.want)
		}
	}
}
