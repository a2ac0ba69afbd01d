package raftlog

import (
	"bytes"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/metalog/metalog/internal/testkit"
	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

// lines is a log destination the test reads while the transport writes.
type lines struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count is the number of lines holding every one of parts.
func (l *lines) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

func (l *lines) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// peerCA is the certificate authority of one test cluster's peer
// certificates, with the certificate its members share.
type peerCA struct {
	*testkit.CA
	leaf *testkit.Cert // for 127.0.0.1, as a server and a client
}

func newPeerCA(t *testing.T) *peerCA {
	ca := testkit.NewCA(t, "peer CA")
	return &peerCA{CA: ca, leaf: ca.Issue(t, "member")}
}

// client and server are the mutual TLS configurations of a member whose
// certificate ca signed and which trusts ca only.
func (ca *peerCA) client() *tls.Config { return ca.ClientTLS(ca.leaf) }

func (ca *peerCA) server() *tls.Config { return ca.ServerTLS(ca.leaf) }

// tlsMember is a transport with peer TLS of one CA, serving its listener.
type tlsMember struct {
	tr   *Transport
	hs   *HandshakeLog
	log  *lines
	addr string
	srv  *grpc.Server
	done chan struct{}
}

func startTLSMember(t *testing.T, id uint64, ca *peerCA) *tlsMember {
	t.Helper()
	m := &tlsMember{log: &lines{}, done: make(chan struct{})}
	m.hs = NewHandshakeLog(m.log.logger())
	creds := m.hs.Credentials(credentials.NewTLS(ca.client()))
	m.tr = NewTransport(TransportConfig{ID: id, Logger: m.log.logger(), TLS: ca.client(), ServerTLS: ca.server(), HandshakeLog: m.hs,
		DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(creds)}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = lis.Addr().String()
	m.srv = grpc.NewServer(grpc.Creds(m.hs.Credentials(credentials.NewTLS(ca.server()))))
	m.tr.Register(m.srv)
	go func() {
		defer close(m.done)
		_ = m.srv.Serve(m.tr.Listen(lis))
	}()
	t.Cleanup(func() {
		m.tr.Stop()
		m.srv.Stop()
		<-m.done
		m.hs.Close()
	})
	return m
}

// TestHandshakeFailuresAreLoudOnBothSides: a member whose peer certificate
// another CA signed cannot open a log stream to its peer, nor the peer to
// it; both sides log a WARN with the reason and the peer's address, once
// for many failed attempts, and remember the failure for readiness. The
// peer gRPC calls (through Credentials) are logged the same way.
func TestHandshakeFailuresAreLoudOnBothSides(t *testing.T) {
	a := startTLSMember(t, 1, newPeerCA(t))
	b := startTLSMember(t, 2, newPeerCA(t))
	if err := a.tr.AddPeer(2, b.addr); err != nil {
		t.Fatal(err)
	}
	heartbeat := []*raftpb.Message{{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2)}}
	// Several failed attempts on each side: the sender reconnects every
	// 50 to 200 ms while there is something to send.
	waitFor(t, "several failed stream handshakes on both sides", func() bool {
		a.tr.Send(heartbeat)
		return a.tr.Stats().SendFailures >= 5 && b.log.count("level=DEBUG", "a peer cannot reach this member") >= 3
	})
	dialed := a.hs.Recent()
	if len(dialed) != 1 || dialed[0].Addr != b.addr || dialed[0].Peer != 2 || dialed[0].Accepted || dialed[0].Reason != "certificate signed by unknown authority" {
		t.Fatalf("dialing side remembers %+v; want one failure with %s (member 2): certificate signed by unknown authority", dialed, b.addr)
	}
	if want := "peer TLS handshake with " + b.addr + " failed: certificate signed by unknown authority (member 2)"; dialed[0].String() != want {
		t.Errorf("dialing side's failure reads %q, want %q", dialed[0].String(), want)
	}
	accepted := b.hs.Recent()
	if len(accepted) != 1 || !accepted[0].Accepted || accepted[0].Addr != "127.0.0.1" || !strings.HasPrefix(accepted[0].Reason, "remote error: tls: ") {
		t.Fatalf("accepting side remembers %+v; want one failure from 127.0.0.1 with the peer's alert", accepted)
	}
	if n := a.log.count("level=WARN", "peer TLS handshake failed", "peer="+b.addr, `reason="certificate signed by unknown authority"`, "peer_id=2"); n != 1 {
		t.Errorf("dialing side logged %d WARN lines for its failed handshakes, want 1:\n%s", n, a.log.buf.String())
	}
	if n := b.log.count("level=WARN", "peer TLS handshake failed", "peer=127.0.0.1", `reason="remote error: tls: `); n != 1 {
		t.Errorf("accepting side logged %d WARN lines for the failed handshakes, want 1:\n%s", n, b.log.buf.String())
	}

	// A peer gRPC call (a snapshot, a status call) fails the same way, and
	// is logged under the same peer and reason: no second WARN line.
	conn, err := grpc.NewClient(b.addr, grpc.WithTransportCredentials(a.hs.Credentials(credentials.NewTLS(a.tr.cfg.TLS))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := peerpb.NewPeerClient(conn).SendSnapshot(testContext(t))
	if err == nil {
		_, err = stream.CloseAndRecv()
	}
	if err == nil {
		t.Fatal("a snapshot stream to a peer of another CA was opened")
	}
	waitFor(t, "the gRPC handshake failure on the dialing side", func() bool {
		return a.log.count("level=DEBUG", "peer TLS handshake failed", "peer="+b.addr) >= 1
	})
	if n := a.log.count("level=WARN", "peer TLS handshake failed"); n != 1 {
		t.Errorf("dialing side logged %d WARN lines after a gRPC handshake failure with the same peer, want 1", n)
	}
	if r := a.hs.Recent(); len(r) != 1 || r[0].Peer != 2 {
		t.Errorf("after the gRPC failure the dialing side remembers %+v; want one failure, still of member 2", r)
	}
}

// TestHandshakeLogLimitsAndForgets: one WARN line per peer and reason per
// handshakeLogEvery (the repeats at DEBUG), another for another reason;
// a failure counts as recent for handshakeRecent after the last one; a
// peer that went away is not a TLS failure.
func TestHandshakeLogLimitsAndForgets(t *testing.T) {
	out := &lines{}
	h := NewHandshakeLog(out.logger())
	now := time.Unix(1000, 0)
	h.now = func() time.Time { return now }
	unknown := errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority")
	for range 10 {
		h.Dialed("10.0.0.2:7071", 7, unknown)
	}
	h.Dialed("10.0.0.2:7071", 7, errors.New("remote error: tls: bad certificate"))
	h.Dialed("10.0.0.3:7071", 8, errors.New("dial tcp 10.0.0.3:7071: connect: connection refused"))
	if n := out.count("level=WARN"); n != 2 {
		t.Fatalf("%d WARN lines, want 2 (one per reason):\n%s", n, out.buf.String())
	}
	if n := out.count("level=DEBUG", `reason="certificate signed by unknown authority"`); n != 9 {
		t.Errorf("%d DEBUG repeats, want 9", n)
	}
	if r := h.Recent(); len(r) != 1 || r[0].Reason != "remote error: tls: bad certificate" {
		t.Fatalf("recent %+v; want the last failure with 10.0.0.2 only", r)
	}
	now = now.Add(handshakeLogEvery)
	h.Dialed("10.0.0.2:7071", 7, unknown)
	if n := out.count("level=WARN"); n != 3 {
		t.Errorf("%d WARN lines after %v, want 3", n, handshakeLogEvery)
	}
	now = now.Add(handshakeRecent)
	if r := h.Recent(); len(r) != 0 {
		t.Errorf("recent %+v %v after the last failure, want none", r, handshakeRecent)
	}
}

// TestHandshakeLogIsBounded: many peers failing at once do not grow what
// is remembered past handshakeKeep.
func TestHandshakeLogIsBounded(t *testing.T) {
	h := NewHandshakeLog(nil)
	for i := range 10 * handshakeKeep {
		h.accepted(net.JoinHostPort(net.IPv4(10, 0, byte(i>>8), byte(i)).String(), "5555"), errors.New("tls: client didn't provide a certificate"))
	}
	if n := len(h.Recent()); n > handshakeKeep {
		t.Fatalf("%d failures remembered, want at most %d", n, handshakeKeep)
	}
}

// TestHandshakeLogReadsGRPCErrors: the error of a peer gRPC call that
// failed its handshake gives the same reason as crypto/tls's own error,
// so both are one peer and reason.
func TestHandshakeLogReadsGRPCErrors(t *testing.T) {
	out := &lines{}
	h := NewHandshakeLog(out.logger())
	h.Dialed("10.0.0.2:7071", 7, status.Error(codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`))
	h.Dialed("10.0.0.2:7071", 0, errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"))
	r := h.Recent()
	if len(r) != 1 || r[0].Reason != "certificate signed by unknown authority" || r[0].Peer != 7 {
		t.Fatalf("recent %+v; want one failure of member 7: certificate signed by unknown authority", r)
	}
	if n := out.count("level=WARN"); n != 1 {
		t.Errorf("%d WARN lines, want 1:\n%s", n, out.buf.String())
	}
}

// TestRefusedClientCertificateIsSeenByTheDialer: a member that trusts its
// peer's CA, but whose own certificate the peer refuses, completes the
// handshake on its side (TLS 1.3) and reads the peer's alert on the
// stream: it remembers and logs the refusal, the peer logs why.
func TestRefusedClientCertificateIsSeenByTheDialer(t *testing.T) {
	caA, caB := newPeerCA(t), newPeerCA(t)
	b := startTLSMember(t, 2, caB)
	out := &lines{}
	hs := NewHandshakeLog(out.logger())
	client := caA.client()
	client.RootCAs = caB.Pool() // trusts b; b does not trust it
	a := NewTransport(TransportConfig{ID: 1, Logger: out.logger(), TLS: client, ServerTLS: caA.server(), HandshakeLog: hs})
	defer a.Stop()
	if err := a.AddPeer(2, b.addr); err != nil {
		t.Fatal(err)
	}
	heartbeat := []*raftpb.Message{{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2)}}
	waitFor(t, "the dialer reading the peer's refusal", func() bool {
		a.Send(heartbeat)
		r := hs.Recent()
		return len(r) == 1 && r[0].Addr == b.addr && r[0].Peer == 2 && strings.HasPrefix(r[0].Reason, "remote error: tls: ")
	})
	waitFor(t, "the peer's WARN line", func() bool {
		return b.log.count("level=WARN", "a peer cannot reach this member", `reason="certificate signed by unknown authority"`) == 1
	})
}
