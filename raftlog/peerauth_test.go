package raftlog

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/metalog/metalog/internal/testkit"
	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

// cnAuthorizer is a PeerAuthorizer of a test cluster: a certificate is
// member id members[CN]; the ids of members are the current members.
type cnAuthorizer struct {
	members map[string]uint64
}

func (a cnAuthorizer) CertificateMember(cert *x509.Certificate) (uint64, error) {
	if id, ok := a.members[cert.Subject.CommonName]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("%w: %s", ErrNotMember, cert.Subject.CommonName)
}

func (a cnAuthorizer) KnownMember(id uint64, name string) (uint64, error) {
	for n, mid := range a.members {
		if (id != 0 && mid == id) || (id == 0 && n == name) {
			return mid, nil
		}
	}
	return 0, fmt.Errorf("%w: %x %q", ErrNotMember, id, name)
}

// text is everything logged so far.
func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// testMembers are the members 2 ("m2") and 3 ("m3") of the tests' cluster,
// whose transport is member 1.
var testMembers = cnAuthorizer{members: map[string]uint64{"m2": 2, "m3": 3}}

// both are the usages of a member's certificate.
var both = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}

// TestCheckPeerUsage: a peer certificate must allow both server and client
// use (or any use).
func TestCheckPeerUsage(t *testing.T) {
	for _, tc := range []struct {
		usages []x509.ExtKeyUsage
		ok     bool
	}{
		{both, true},
		{[]x509.ExtKeyUsage{x509.ExtKeyUsageAny}, true},
		{[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, false},
		{[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, false},
		{nil, false},
	} {
		err := CheckPeerUsage(&x509.Certificate{ExtKeyUsage: tc.usages})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrPeerUsage)) {
			t.Errorf("usages %v: %v, want ok=%v", tc.usages, err, tc.ok)
		}
	}
}

// foreignSignal is a LocalNode of cluster 0xbb that records the messages
// stepped and signals ReportForeign.
type foreignSignal struct {
	stepRecorder
	reported chan error
}

func newForeignSignal() *foreignSignal { return &foreignSignal{reported: make(chan error, 4)} }

func (*foreignSignal) ClusterID() uint64 { return 0xbb }
func (f *foreignSignal) ReportForeign(err error) {
	select {
	case f.reported <- err:
	default:
	}
}

// gatedMember is a transport of member 1, with a gate knowing members 2
// and 3, serving a listener; node receives what it steps.
type gatedMember struct {
	tr   *Transport
	addr string
	log  *lines
}

// startGatedMember starts a gated member, with peer TLS of ca unless ca is
// nil.
func startGatedMember(t *testing.T, node LocalNode, ca *peerCA) *gatedMember {
	t.Helper()
	m := &gatedMember{log: &lines{}}
	cfg := TransportConfig{ID: 1, Logger: m.log.logger(), Gate: NewPeerGate(testMembers, m.log.logger())}
	var opts []grpc.ServerOption
	if ca != nil {
		cfg.TLS, cfg.ServerTLS = ca.client(), ca.server()
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.Gate.ServerTLS(ca.server()))))
	}
	m.tr = NewTransport(cfg)
	m.tr.SetNode(node)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = lis.Addr().String()
	srv := grpc.NewServer(opts...)
	m.tr.Register(srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(m.tr.Listen(lis))
	}()
	t.Cleanup(func() {
		m.tr.Stop()
		srv.Stop()
		<-done
	})
	return m
}

// frames encodes msgs as a log stream's frames.
func frames(msgs ...*raftpb.Message) []byte {
	var b []byte
	for _, m := range msgs {
		mb, err := proto.Marshal(m)
		if err != nil {
			panic(err)
		}
		b = protowire.AppendVarint(b, uint64(len(mb)))
		b = append(b, mb...)
	}
	return b
}

// heartbeatFrom is a heartbeat of member from to member 1.
func heartbeatFrom(from uint64) *raftpb.Message {
	return &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: new(from), To: new(uint64(1)), Term: new(uint64(5))}
}

// helloFrom is the hello of member from of cluster to member 1.
func helloFrom(from, cluster uint64) *raftpb.Message {
	m := &raftpb.Message{}
	if err := proto.Unmarshal(hello(from, 1, cluster), m); err != nil {
		panic(err)
	}
	return m
}

// openStream opens a log stream to addr (over TLS with cert, trusting ca,
// when cert is not nil), sends msgs and returns what the server answered
// before closing it, and whether it closed it within a few seconds.
func openStream(t *testing.T, addr string, ca *peerCA, cert *tls.Certificate, msgs ...*raftpb.Message) (answer []byte, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(streamPreface)); err != nil {
		t.Fatal(err)
	}
	if cert != nil {
		tc := tls.Client(c, &tls.Config{Certificates: []tls.Certificate{*cert}, RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
		if err := tc.Handshake(); err != nil {
			return nil, true
		}
		c = tc
	}
	if _, err := c.Write(frames(msgs...)); err != nil {
		return nil, true
	}
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	var buf bytes.Buffer
	_, err = io.Copy(&buf, c)
	var ne net.Error
	return buf.Bytes(), !(errors.As(err, &ne) && ne.Timeout())
}

// TestPlaintextStreamsAreBoundToAMember: without TLS a log stream is bound
// to the member its first message names, which must be one the gate
// knows; a message sent as another member closes it; nothing of a refused
// stream is stepped.
func TestPlaintextStreamsAreBoundToAMember(t *testing.T) {
	rec := &stepRecorder{}
	m := startGatedMember(t, rec, nil)
	if _, closed := openStream(t, m.addr, nil, nil, helloFrom(9, 0), heartbeatFrom(9)); !closed {
		t.Error("a stream of member 9, which is not one, was kept open")
	}
	if _, closed := openStream(t, m.addr, nil, nil, heartbeatFrom(2), heartbeatFrom(3), heartbeatFrom(2)); !closed {
		t.Error("a stream of member 2 that sent as member 3 was kept open")
	}
	got := rec.stepped()
	if len(got) != 1 || got[0].GetFrom() != 2 {
		t.Fatalf("stepped %v, want member 2's first heartbeat only", got)
	}
	if n := m.log.count("level=WARN", "does not come from a member this member knows", "from=9"); n != 1 {
		t.Errorf("%d WARN lines of the stranger's refusal, want 1:\n%s", n, m.log.text())
	}
	if n := m.log.count("level=WARN", "sent a message as another member", "member 2", "as member 3"); n != 1 {
		t.Errorf("%d WARN lines of the forged From, want 1:\n%s", n, m.log.text())
	}
}

// TestCertifiedStreams: with peer TLS a log stream is bound to the member
// its certificate identifies: a certificate of the CA that identifies no
// member, or allows client use only, is refused in the handshake; a
// member's certificate may send as itself only, its hello included.
func TestCertifiedStreams(t *testing.T) {
	ca := newPeerCA(t)
	rec := &stepRecorder{}
	m := startGatedMember(t, rec, ca)
	stranger, clientOnly := ca.Issue(t, "stranger").TLS, ca.Issue(t, "m2", testkit.ClientOnly()).TLS
	m2 := ca.Issue(t, "m2").TLS
	for name, cert := range map[string]*tls.Certificate{"a certificate of no member": &stranger, "a client certificate": &clientOnly} {
		if _, closed := openStream(t, m.addr, ca, cert, heartbeatFrom(2)); !closed {
			t.Errorf("%s: its stream was kept open", name)
		}
	}
	if _, closed := openStream(t, m.addr, ca, &m2, helloFrom(3, 0), heartbeatFrom(3)); !closed {
		t.Error("m2's certificate with a hello of member 3: kept open")
	}
	if _, closed := openStream(t, m.addr, ca, &m2, heartbeatFrom(2), heartbeatFrom(3)); !closed {
		t.Error("m2's certificate sending as member 3: kept open")
	}
	got := rec.stepped()
	if len(got) != 1 || got[0].GetFrom() != 2 {
		t.Fatalf("stepped %v, want member 2's first heartbeat only", got)
	}
	for _, want := range []string{`subject="CN=stranger"`, `subject="CN=m2"`, ErrPeerUsage.Error()} {
		if m.log.count("level=WARN", "refused a peer certificate", want) == 0 {
			t.Errorf("no WARN line of a refused certificate with %q:\n%s", want, m.log.text())
		}
	}
}

// TestCertifiedLeaderOfAnotherClusterStopsTheMember: a hello of another
// cluster followed by leader traffic stops the member only when a
// certificate proved the sender is a member it knows; without TLS the
// stream is refused (with this member's cluster id) and the member goes
// on.
func TestCertifiedLeaderOfAnotherClusterStopsTheMember(t *testing.T) {
	plain := newForeignSignal()
	pm := startGatedMember(t, plain, nil)
	answer, closed := openStream(t, pm.addr, nil, nil, helloFrom(2, 0xaa), heartbeatFrom(2))
	if !closed || len(answer) != 9 || answer[0] != streamMismatch {
		t.Fatalf("plaintext hello of another cluster: closed %v, answer %x; want a mismatch answer", closed, answer)
	}
	select {
	case err := <-plain.reported:
		t.Fatalf("a member stopped on the word of an uncertified sender: %v", err)
	default:
	}
	if pm.log.count("level=ERROR", "refused a log stream of another cluster", "nothing proves who it is") != 1 {
		t.Errorf("no ERROR line of the refusal:\n%s", pm.log.text())
	}

	ca := newPeerCA(t)
	certified := newForeignSignal()
	cm := startGatedMember(t, certified, ca)
	m2 := ca.Issue(t, "m2").TLS
	openStream(t, cm.addr, ca, &m2, helloFrom(2, 0xaa), heartbeatFrom(2))
	select {
	case err := <-certified.reported:
		if !errors.Is(err, ErrClusterMismatch) {
			t.Fatalf("stopped with %v, want ErrClusterMismatch", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a certified leader of another cluster did not stop the member")
	}
	if got := append(plain.stepped(), certified.stepped()...); len(got) != 0 {
		t.Fatalf("stepped %v of another cluster", got)
	}
}

// TestSnapshotsComeFromTheirMember: a snapshot stream must come from the
// member its message names: without TLS the call names it in its
// metadata; naming nobody, a stranger or another member is refused before
// anything is stepped.
func TestSnapshotsComeFromTheirMember(t *testing.T) {
	rec := &stepRecorder{}
	m := startGatedMember(t, rec, nil)
	conn, err := grpc.NewClient(m.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := peerpb.NewPeerClient(conn)
	data := []byte("snapshot data")
	msg := &raftpb.Message{Type: raftpb.MsgSnap.Enum(), From: new(uint64(2)), To: new(uint64(1)), Term: new(uint64(3)),
		Snapshot: &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(9)), Term: new(uint64(3))}}}
	hdr, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	send := func(md ...string) error {
		stream, err := client.SendSnapshot(metadata.AppendToOutgoingContext(testContext(t), md...))
		if err != nil {
			t.Fatal(err)
		}
		if stream.Send(&peerpb.SnapshotChunk{Message: hdr, Size: uint64(len(data)), Sha256: sum[:], Data: data}) == nil {
			_, err = stream.CloseAndRecv()
			return err
		}
		_, err = stream.CloseAndRecv()
		return err
	}
	for name, md := range map[string][]string{
		"no member named":  nil,
		"a stranger":       {PeerMemberIDKey, "9"},
		"another member":   {PeerMemberIDKey, "3"},
		"a malformed id":   {PeerMemberIDKey, "xyz"},
		"a stranger named": {PeerMemberNameKey, "m9"},
	} {
		if err := send(md...); status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s: %v, want PermissionDenied", name, err)
		}
	}
	if got := rec.stepped(); len(got) != 0 {
		t.Fatalf("stepped %d refused snapshots", len(got))
	}
	if err := send(PeerMemberIDKey, "2"); err != nil {
		t.Fatalf("member 2's snapshot: %v", err)
	}
	if got := rec.stepped(); len(got) != 1 {
		t.Fatalf("stepped %d snapshots, want member 2's", len(got))
	}
}

// fuzzConn is a net.Conn whose reads come from a byte slice and whose
// writes go nowhere: one log stream's bytes, for serveStream.
type fuzzConn struct {
	r *bytes.Reader
}

func (c *fuzzConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *fuzzConn) Close() error                     { return nil }
func (c *fuzzConn) LocalAddr() net.Addr              { return fuzzAddr{} }
func (c *fuzzConn) RemoteAddr() net.Addr             { return fuzzAddr{} }
func (c *fuzzConn) SetDeadline(time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }

// fuzzAddr is the address of a fuzzConn's peer.
type fuzzAddr struct{}

func (fuzzAddr) Network() string { return "tcp" }
func (fuzzAddr) String() string  { return "127.0.0.1:1" }

// countingForeign is a LocalNode of cluster 0xbb, in which member 3 was
// removed, that records the messages stepped and counts ReportForeign.
type countingForeign struct {
	stepRecorder
	mu      sync.Mutex // guards foreign
	foreign int
}

func (*countingForeign) ClusterID() uint64 { return 0xbb }

func (r *countingForeign) ReportForeign(error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.foreign++
}

func (*countingForeign) PeerRemoved(id uint64) (uint64, bool) {
	if id == 3 {
		return 7, true // member 3 was removed: told so, never stepped
	}
	return 0, false
}

// FuzzPeerStream feeds arbitrary bytes, as a plaintext log stream after
// its preface, to a gated transport of member 1 (members 2 and 3 known, 3
// removed): whatever they hold, the transport does not panic, steps only
// messages of member 2 (the one known member that is not removed), all
// of them From the member the stream is bound to, and never stops on
// another cluster's word. The seeds run in plain go test.
func FuzzPeerStream(f *testing.F) {
	f.Add(frames(helloFrom(2, 0xbb), heartbeatFrom(2), heartbeatFrom(2)))
	f.Add(frames(heartbeatFrom(2), heartbeatFrom(3)))
	f.Add(frames(helloFrom(9, 0xbb), heartbeatFrom(9)))
	f.Add(frames(helloFrom(2, 0xaa), heartbeatFrom(2)))
	f.Add(frames(helloFrom(3, 0xbb), heartbeatFrom(3)))
	f.Add(frames(helloFrom(1, 0xbb), heartbeatFrom(1)))
	f.Add(frames(&raftpb.Message{Type: raftpb.MsgProp.Enum(), From: new(uint64(2)), To: new(uint64(1)), Entries: []*raftpb.Entry{{Data: []byte("x")}}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{5, 1, 2})
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		node := &countingForeign{}
		tr := NewTransport(TransportConfig{ID: 1, Gate: NewPeerGate(testMembers, nil)})
		defer tr.Stop()
		tr.SetNode(node)
		tr.serveStream(&fuzzConn{r: bytes.NewReader(stream)})
		for _, m := range node.stepped() {
			if m.GetFrom() != 2 {
				t.Fatalf("stepped a %v of member %d; only member 2 may send", m.GetType(), m.GetFrom())
			}
		}
		node.mu.Lock()
		defer node.mu.Unlock()
		if node.foreign != 0 {
			t.Fatalf("an uncertified stream stopped the node")
		}
	})
}
