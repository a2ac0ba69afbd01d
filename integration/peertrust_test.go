package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	binenc "encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// peerArgs issues member name's peer certificate (its name as CN, for
// 127.0.0.1) and returns the serve flags of peer mutual TLS with it.
func (p *pki) peerArgs(name string) []string {
	cert, key := p.issueWith(name, nil)
	return []string{"--peer-cert-file", cert, "--peer-key-file", key, "--peer-ca-file", p.caFile}
}

// intruder issues a certificate of the peer CA p that names no member:
// CN=intruder, no SAN, for client use only, and returns a TLS config
// presenting it and trusting p.
func (p *pki) intruder() *tls.Config {
	p.issueWith("intruder", func(c *x509.Certificate) {
		c.IPAddresses, c.DNSNames = nil, nil
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	return p.tlsConfig("intruder")
}

// hello is the first frame of a log stream of member from of cluster to
// member to (raftlog/streamid.go).
func hello(from, to, cluster uint64) *raftpb.Message {
	ctx := binenc.BigEndian.AppendUint64([]byte("metalog cluster "), cluster)
	return &raftpb.Message{Type: raftpb.MsgHup.Enum(), From: proto.Uint64(from), To: proto.Uint64(to), Context: ctx}
}

// forgedProposal is a MsgProp from member from to member to whose one
// entry is a DDL command of text, as principal asked, in the log's entry
// format (raftlog's proposal header, then metadata's command).
func forgedProposal(from, to uint64, text, principal string) *raftpb.Message {
	data := []byte{1, 0, 0, 0} // header version 1, proposer 0, boot 0, seq 0
	data = metadata.Command{Kind: metadata.KindDDL, Text: text, Principal: principal, Time: time.Now().UnixNano()}.Marshal(data)
	return &raftpb.Message{Type: raftpb.MsgProp.Enum(), From: proto.Uint64(from), To: proto.Uint64(to),
		Entries: []*raftpb.Entry{{Data: data}}}
}

// peerStream is a raft log stream opened by hand to a peer listener: the
// preface, then TLS when a config is given, then frames.
type peerStream struct {
	c net.Conn
}

// dialPeerStream opens a log stream to addr, over TLS with cfg if not nil.
func dialPeerStream(addr string, cfg *tls.Config) (*peerStream, error) {
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte("MLRAFT1\n")); err != nil {
		conn.Close()
		return nil, err
	}
	if cfg == nil {
		return &peerStream{c: conn}, nil
	}
	cfg = cfg.Clone()
	cfg.ServerName = "127.0.0.1"
	tc := tls.Client(conn, cfg)
	_ = tc.SetDeadline(time.Now().Add(3 * time.Second))
	if err := tc.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	_ = tc.SetDeadline(time.Time{})
	return &peerStream{c: tc}, nil
}

// send writes msgs as frames; an error means the server already refused
// the stream.
func (s *peerStream) send(msgs ...*raftpb.Message) error {
	var b []byte
	for _, m := range msgs {
		mb, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		b = protowire.AppendVarint(b, uint64(len(mb)))
		b = append(b, mb...)
	}
	_ = s.c.SetWriteDeadline(time.Now().Add(3 * time.Second))
	_, err := s.c.Write(b)
	return err
}

// closedByServer reports whether the server ended the stream (closed it,
// or refused its certificate) within limit, reading and discarding what
// it answers; false means the stream is still open: taken.
func (s *peerStream) closedByServer(limit time.Duration) bool {
	defer s.c.Close()
	_ = s.c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, s.c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// streamRefused opens a log stream to addr (TLS with cfg unless nil),
// sends msgs and reports whether the server refused it (the handshake,
// or by closing it) rather than keeping it open.
func streamRefused(t *testing.T, addr string, cfg *tls.Config, msgs ...*raftpb.Message) bool {
	t.Helper()
	s, err := dialPeerStream(addr, cfg)
	if err != nil {
		return true
	}
	if err := s.send(msgs...); err != nil {
		s.c.Close()
		return true
	}
	return s.closedByServer(3 * time.Second)
}

// peerCalls makes the peer RPCs (NodeStatus, Repair, HistoryRecords) and a
// snapshot stream on addr's peer port with creds, and returns their
// errors by name.
func peerCalls(t *testing.T, addr string, creds credentials.TransportCredentials) map[string]error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[string]error{}
	out["NodeStatus"] = peerCall(ctx, conn, "NodeStatus", nil)
	out["Repair"] = peerCall(ctx, conn, "Repair", nil)
	// HistoryRecordsRequest{from_epoch: 0, to_epoch: 100}: field 2, varint.
	if stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, peerServicePath+"HistoryRecords", grpc.ForceCodecV2(rawFrameCodec{})); err != nil {
		out["HistoryRecords"] = err
	} else if err := stream.SendMsg(&rawFrame{b: []byte{0x10, 100}}); err != nil {
		out["HistoryRecords"] = err
	} else if err := stream.CloseSend(); err != nil {
		out["HistoryRecords"] = err
	} else {
		out["HistoryRecords"] = stream.RecvMsg(&rawFrame{})
	}
	snap, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, "/metalog.peer.v1.Peer/SendSnapshot", grpc.ForceCodecV2(rawFrameCodec{}))
	if err == nil {
		err = snap.SendMsg(&rawFrame{})
		if err == nil {
			err = snap.CloseSend()
		}
		if err == nil {
			err = snap.RecvMsg(&rawFrame{})
		}
	}
	out["SendSnapshot"] = err
	return out
}

// checkRefusedByHandshake requires every call of calls to have failed on
// the connection (the peer port refused the certificate), not been
// answered by a handler.
func checkRefusedByHandshake(t *testing.T, what string, calls map[string]error) {
	t.Helper()
	for name, err := range calls {
		// The peer's alert ("bad certificate") or the connection's end
		// ("broken pipe", "reset"), whichever the client reads first.
		if code := status.Code(err); code != codes.Unavailable {
			t.Errorf("%s: %s answered %v (code %v), want the connection refused (Unavailable)", what, name, err, code)
		}
	}
}

// waitLogged waits until s has logged a line holding every one of parts
// (t is the test or subtest waiting).
func waitLogged(t *testing.T, s *server, parts ...string) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("a log line with %q", parts), func() error {
		if countLines(s.stderr.String(), parts...) == 0 {
			return errors.New("not logged yet:\n" + s.stderr.String())
		}
		return nil
	})
}

// tokenClient is a client of s's gRPC address with a bearer token over
// plaintext loopback.
func tokenClient(t *testing.T, s *server, token string) pb.MetadataServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(loopbackToken(token)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewMetadataServiceClient(conn)
}

// secretStillThere applies a DDL through exec as a barrier after the
// forged messages were sent, waits for every running member to agree,
// and requires other.secret to still exist on each, and the forged
// principal in no member's history.
func secretStillThere(t *testing.T, c *cluster, client func(*server) pb.MetadataServiceClient, barrier string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client(c.servers[0]).Execute(ctx, &pb.ExecuteRequest{Statements: barrier}); err != nil {
		t.Fatal(err)
	}
	c.waitSameDigestWith(client)
	for i, s := range c.servers {
		if !s.running() {
			continue
		}
		if _, err := client(s).GetTable(ctx, &pb.GetTableRequest{Keyspace: "other", Table: "secret"}); err != nil {
			t.Errorf("%s: other.secret after the forged proposal: %v (a forged DROP TABLE applied)", c.names[i], err)
		}
	}
}

// waitSameDigestWith is waitSameDigest with clients made by client.
func (c *cluster) waitSameDigestWith(client func(*server) pb.MetadataServiceClient) {
	c.t.Helper()
	waitFor(c.t, 60*time.Second, "equal digests", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := client(c.servers[0]).ListMembers(ctx, &pb.ListMembersRequest{})
		if err != nil {
			return err
		}
		digest := ""
		for _, m := range r.Members {
			switch {
			case !m.Reachable:
				return fmt.Errorf("%s unreachable: %s", m.Name, m.Error)
			case digest == "":
				digest = m.Digest
			case m.Digest != digest:
				return fmt.Errorf("%s at digest %.12s, another at %.12s", m.Name, m.Digest, digest)
			}
		}
		return nil
	})
}

// clusterID is the id of the cluster s belongs to.
func clusterID(t *testing.T, client pb.MetadataServiceClient) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := client.ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var id uint64
	if _, err := fmt.Sscanf(r.ClusterId, "%x", &id); err != nil {
		t.Fatalf("cluster id %q: %v", r.ClusterId, err)
	}
	return id
}

// TestPeerPortTrustsOnlyMemberCertificates: a cluster with tokens and peer
// mutual TLS of a dedicated peer CA, each member with a certificate naming
// it. A certificate of that CA that names no member (CN=intruder, no SAN,
// client use only) is refused on the log stream, the snapshot stream and
// every peer RPC, and a forged proposal it sends never applies; a
// member's certificate sending as another member is cut off and its
// forged proposal never applies; a removed member's certificate is
// refused. The refusals are logged with the certificate's subject.
func TestPeerPortTrustsOnlyMemberCertificates(t *testing.T) {
	peers := newPKI(t, "peers")
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("ops "+tokenHash("ops-token")+" operator,ddl,reader\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newClusterEach(t, 3, nil, peers.peerArgs, "--auth-token-file", tokens)
	ops := func(s *server) pb.MetadataServiceClient { return tokenClient(t, s, "ops-token") }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := ops(c.servers[0]).Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}; CREATE TABLE other.secret (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	cluster := clusterID(t, ops(c.servers[0]))
	n1, n2, n3 := member.ID("n1"), member.ID("n2"), member.ID("n3")
	drop := func(from uint64) *raftpb.Message {
		return forgedProposal(from, n1, "DROP TABLE other.secret", "token:the-ceo")
	}

	t.Run("non-member certificate", func(t *testing.T) {
		intruder := peers.intruder()
		if !streamRefused(t, c.servers[0].peers, intruder, hello(n2, n1, cluster), drop(n2)) {
			t.Error("a log stream with a certificate naming no member was kept open")
		}
		checkRefusedByHandshake(t, "a certificate naming no member", peerCalls(t, c.servers[0].peers, credentials.NewTLS(intruder)))
		secretStillThere(t, c, ops, "CREATE TABLE other.after_intruder (id int PRIMARY KEY)")
		waitLogged(t, c.servers[0], `msg="refused a peer certificate: it does not identify a current member"`, `subject="CN=intruder"`)
	})

	t.Run("another member's From", func(t *testing.T) {
		n2cert := peers.tlsConfig("n2")
		// The hello names n2, the proposal n3.
		if !streamRefused(t, c.servers[0].peers, n2cert, hello(n2, n1, cluster), drop(n3)) {
			t.Error("a stream of n2's certificate that sent as n3 was kept open")
		}
		// The hello already names n3.
		if !streamRefused(t, c.servers[0].peers, n2cert, hello(n3, n1, cluster), drop(n3)) {
			t.Error("a stream of n2's certificate whose hello names n3 was kept open")
		}
		secretStillThere(t, c, ops, "CREATE TABLE other.after_from (id int PRIMARY KEY)")
		waitLogged(t, c.servers[0], "refused a log stream: it sent a message as another member")
	})

	t.Run("removed member's certificate", func(t *testing.T) {
		if out, errOut, rc := c.servers[0].cli("cluster", "remove", "n3", "--token", "ops-token"); rc != 0 {
			t.Fatalf("cluster remove n3: rc=%d %s %s", rc, out, errOut)
		}
		c.servers[2].waitExit(30 * time.Second)
		c.servers = c.servers[:2]
		n3cert := peers.tlsConfig("n3")
		if !streamRefused(t, c.servers[0].peers, n3cert, hello(n3, n1, cluster), drop(n3)) {
			t.Error("a log stream with the removed n3's certificate was kept open")
		}
		checkRefusedByHandshake(t, "the removed n3's certificate", peerCalls(t, c.servers[0].peers, credentials.NewTLS(n3cert)))
		secretStillThere(t, c, ops, "CREATE TABLE other.after_removed (id int PRIMARY KEY)")
		waitLogged(t, c.servers[0], `subject="CN=n3"`)
	})
}

// TestPlaintextPeerPortRefusesStrangers: without authentication and peer
// TLS (the quickstart), a local process that names no member cannot stop
// a member with a hello of another cluster and a heartbeat, nor apply a
// forged proposal, nor call a peer RPC; one that names a member (nothing
// proves who it is) still does not stop it with another cluster's hello.
func TestPlaintextPeerPortRefusesStrangers(t *testing.T) {
	c := newCluster(t, 3)
	plain := func(s *server) pb.MetadataServiceClient { return s.client() }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}; CREATE TABLE other.secret (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	cluster := clusterID(t, c.servers[0].client())
	n1, n2 := member.ID("n1"), member.ID("n2")
	heartbeat := func(from uint64) *raftpb.Message {
		return &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(from), To: proto.Uint64(n1), Term: proto.Uint64(1 << 40)}
	}
	const stranger = 1 // no member's id
	for _, from := range []uint64{stranger, n2} {
		if !streamRefused(t, c.servers[0].peers, nil, hello(from, n1, 0xdead), heartbeat(from)) {
			t.Errorf("a stream of cluster dead from %x was kept open", from)
		}
	}
	if !streamRefused(t, c.servers[0].peers, nil, hello(stranger, n1, cluster), forgedProposal(stranger, n1, "DROP TABLE other.secret", "anonymous")) {
		t.Error("a stream of a stranger naming no member was kept open")
	}
	secretStillThere(t, c, plain, "CREATE TABLE other.after (id int PRIMARY KEY)")
	for name, err := range peerCalls(t, c.servers[0].peers, insecure.NewCredentials()) {
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "names no member") {
			t.Errorf("%s from a caller naming no member: %v, want PermissionDenied", name, err)
		}
	}
	if log := c.servers[0].stderr.String(); !c.servers[0].running() || strings.Contains(log, "raft loop stopped") || strings.Contains(log, "stopping after a fatal error") {
		t.Fatalf("n1 stopped on the word of a stranger:\n%s", log)
	}
	if code, body, err := c.servers[0].readyz(); err != nil || code != http.StatusOK {
		t.Fatalf("n1 after the strangers: readyz %d %q %v", code, body, err)
	}
	c.servers[0].waitLog(10*time.Second, "refused a log stream: its first message does not come from a member this member knows")
	c.servers[0].waitLog(10*time.Second, "nothing proves who it is")
}

// TestAuthWithoutPeerTLSIsRefused: serve with authentication on (tokens)
// and no peer mutual TLS refuses to start, saying why and how; with
// --insecure-peer it starts, with a WARN and the warning in /readyz,
// which stays 200.
func TestAuthWithoutPeerTLSIsRefused(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("ops "+tokenHash("ops-token")+" operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveRefused(t, "tokens without peer TLS", "authentication is on, but the peer port has no mutual TLS", "--peer-addr", freeAddr(t), "--auth-token-file", tokens)

	s := newServer(t)
	s.start("--auth-token-file", tokens, "--insecure-peer")
	s.waitLog(10*time.Second, `level=WARN msg="WARNING: the peer port has no TLS while clients must authenticate (--insecure-peer)`)
	code, body, err := s.readyz()
	if err != nil || code != http.StatusOK || !strings.Contains(body, "the peer port has no TLS while clients must authenticate") {
		t.Fatalf("readyz with --insecure-peer: %d %q %v, want 200 saying the peer port has no TLS", code, body, err)
	}
}

// TestJoinWithSeparatePeerAndClientCAs: the client listeners' CA and the
// peer CA are different, and no certificate has a role for joining: a
// member added with cluster add joins with its peer certificate (which
// the client port accepts for ListMembers only) and replicates.
func TestJoinWithSeparatePeerAndClientCAs(t *testing.T) {
	clients, peers := newPKI(t, "clients"), newPKI(t, "peers")
	srvCert, srvKey := clients.issue("server", "metalog-server", time.Time{}, time.Time{})
	tokens := filepath.Join(clients.dir, "tokens")
	if err := os.WriteFile(tokens, []byte("ops "+tokenHash("ops-token")+" operator,ddl,reader\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secured := func(name string) []string {
		return append([]string{"--name", name, "--client-cert-file", srvCert, "--client-key-file", srvKey,
			"--client-ca-file", clients.caFile, "--auth-token-file", tokens}, peers.peerArgs(name)...)
	}
	n1 := newServer(t)
	n1.args = secured("n1")
	n1.startAsync()
	n1.waitReadyTLS(clients.tlsConfig(""))
	ops := []string{"--cacert", clients.caFile, "--token", "ops-token"}
	if out, errOut, rc := n1.cli(append([]string{"exec", "-e", createKS}, ops...)...); rc != 0 {
		t.Fatalf("exec: rc=%d %s %s", rc, out, errOut)
	}
	n2 := newServer(t)
	if out, errOut, rc := n1.cli(append([]string{"cluster", "add", "--name", "n2", "--peer-addr", n2.peers}, ops...)...); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, errOut)
	}
	n2.args = append(secured("n2"), "--join", n1.grpcAddr)
	n2.startAsync()
	n2.waitReadyTLS(clients.tlsConfig(""))
	if out, errOut, rc := n1.cli(append([]string{"exec", "-e", "CREATE TABLE ks.joined (id int PRIMARY KEY)"}, ops...)...); rc != 0 {
		t.Fatalf("exec after the join: rc=%d %s %s", rc, out, errOut)
	}
	out, errOut, rc := n2.cli(append([]string{"describe", "ks.joined", "--min-epoch", "2"}, ops...)...)
	if rc != 0 || !strings.Contains(out, "CREATE TABLE ks.joined") {
		t.Fatalf("describe on the joined member: rc=%d %s %s", rc, out, errOut)
	}
	// The peer certificate lists the members, and does nothing else. (It
	// is sent although the listener names the client CA only, as a
	// joining member sends it.)
	n2peer := peers.tlsConfig("n2")
	n2cert := n2peer.Certificates[0]
	n2peer.Certificates = nil
	n2peer.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &n2cert, nil }
	n2peer.RootCAs = clients.Pool()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	asPeer := dialTLS(t, n1.grpcAddr, n2peer)
	if _, err := asPeer.ListMembers(ctx, &pb.ListMembersRequest{}); err != nil {
		t.Errorf("ListMembers with n2's peer certificate: %v", err)
	}
	if _, err := asPeer.GetSchema(ctx, &pb.GetSchemaRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("GetSchema with n2's peer certificate: %v, want PermissionDenied", err)
	}
}

// peerServicePath is the prefix of the peer service's method paths, which
// the members' wire keeps (the service is internal to package member).
const peerServicePath = "/metalog.v1.PeerService/"

// peerCall calls the unary method of the peer service with the request's
// encoded bytes (nil: an empty request), without its generated code.
func peerCall(ctx context.Context, conn *grpc.ClientConn, method string, req []byte) error {
	return conn.Invoke(ctx, peerServicePath+method, &rawFrame{b: req}, &rawFrame{}, grpc.ForceCodecV2(rawFrameCodec{}))
}

// rawFrameCodec passes rawFrame bytes through gRPC unchanged, to send a
// snapshot stream or a peer call without the peer service's generated
// code.
type rawFrameCodec struct{}

// rawFrame is one message's bytes.
type rawFrame struct{ b []byte }

func (rawFrameCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(*rawFrame).b)}, nil
}

func (rawFrameCodec) Unmarshal(data mem.BufferSlice, v any) error {
	v.(*rawFrame).b = data.Materialize()
	return nil
}

func (rawFrameCodec) Name() string { return "proto" }

// TestLaggingMemberTakesANewLeaderItsPeersVouchFor: with peer TLS, n3 is
// down while n4 and n5 are added and one of them becomes the leader (the
// other old member, n2 or n1, kept behind by a fault so that it cannot
// win). Started again, n3's log does not show the leader, yet it catches
// up: the members it knows vouch for the new ones, with their peer
// addresses, and its certificates check against those.
func TestLaggingMemberTakesANewLeaderItsPeersVouchFor(t *testing.T) {
	ff := newFaultFile(t)
	prepare := func(s *server) {
		s.bin = taggedBinary(t, faultsTags)
		s.env = append(s.env, ff.env())
	}
	peers := newPKI(t, "peers")
	c := newClusterEach(t, 3, prepare, peers.peerArgs)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	c.servers[2].stop()
	for _, name := range []string{"n4", "n5"} {
		s := newServer(t)
		prepare(s)
		if out, errOut, rc := c.servers[0].cli("cluster", "add", "--name", name, "--peer-addr", s.peers); rc != 0 {
			t.Fatalf("cluster add %s: rc=%d %s %s", name, rc, out, errOut)
		}
		s.start(append([]string{"--name", name, "--join", c.servers[0].grpcAddr}, peers.peerArgs(name)...)...)
		c.servers, c.names = append(c.servers, s), append(c.names, name)
		c.waitVoter(name)
	}
	// Voters n1..n5, n3 down: the leader is new, or made so.
	if leader := c.names[c.leader(0, 1, 3, 4)]; leader == "n1" || leader == "n2" {
		behind := map[string]string{"n1": "n2", "n2": "n1"}[leader]
		ff.set("drop " + leader + " " + behind + "\n")
		c.waitFaults("drop " + leader + " " + behind + "\n")
		if _, err := c.servers[3].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.ahead (id int PRIMARY KEY)"}); err != nil {
			t.Fatal(err)
		}
		ff.set("isolate " + leader + "\n")
		c.waitFaults("isolate " + leader + "\n")
		if now := c.names[c.leader(3, 4)]; now != "n4" && now != "n5" {
			t.Fatalf("leader %s after isolating %s", now, leader)
		}
		ff.set("")
	}
	if _, err := c.servers[3].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.while_n3_was_down (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	c.servers[2].startAsync()
	if err := c.servers[2].readyErr(60 * time.Second); err != nil {
		_, body, _ := c.servers[2].readyz()
		t.Fatalf("n3 not ready: %v %s\n%s", err, body, c.servers[2].stderr.String())
	}
	c.waitSameDigest()
	c.servers[2].waitLog(10*time.Second, "members this member's log does not show yet")
}
