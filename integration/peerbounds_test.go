package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/raftlog"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// heapAlloc reads go_memstats_heap_alloc_bytes from s's /metrics: the
// bytes of the heap the process holds.
func heapAlloc(t *testing.T, s *server) int64 {
	t.Helper()
	resp, err := http.Get("http://" + s.httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_alloc_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int64(f)
		}
	}
	t.Fatal("no go_memstats_heap_alloc_bytes in /metrics")
	return 0
}

// rawCodec sends and receives messages as the bytes they are, under the
// proto content subtype.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// snapshotHeader is the first chunk of a SendSnapshot stream
// (metalog.peer.v1.SnapshotChunk, encoded by hand: message = 1, size = 2,
// sha256 = 3) of a snapshot at index 5 from member from to member to,
// announcing size bytes.
func snapshotHeader(t *testing.T, from, to, size uint64) []byte {
	t.Helper()
	msg, err := proto.Marshal(&raftpb.Message{Type: raftpb.MsgSnap.Enum(), From: proto.Uint64(from), To: proto.Uint64(to), Term: proto.Uint64(1),
		Snapshot: &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(5), Term: proto.Uint64(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, msg)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, size)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendBytes(b, make([]byte, 32))
}

// TestPeerAnnouncedSizesCostNothing: on the peer port of a member of a
// two-member cluster without peer TLS, eight log streams each announce a
// 60 MiB message and eight snapshot streams, naming the other member as
// their sender (which is all a peer without a certificate shows), each a
// 1 TiB snapshot, and send nothing more. The member ends every one of
// them, the snapshots with the size bound's refusal, and its heap does not
// grow by what they announce; it still answers a DDL.
func TestPeerAnnouncedSizesCostNothing(t *testing.T) {
	c := newCluster(t, 2)
	s := c.servers[0]
	before := heapAlloc(t, s)
	const streams = 8
	var conns []net.Conn
	for range streams {
		c, err := net.DialTimeout("tcp", s.peers, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(append([]byte("MLRAFT1\n"), protowire.AppendVarint(nil, 60<<20)...)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	conn, err := grpc.NewClient(s.peers, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	ctx = metadata.AppendToOutgoingContext(ctx, raftlog.PeerMemberNameKey, "n2")
	var answered atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range streams {
		st, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, "/metalog.peer.v1.Peer/SendSnapshot", grpc.ForceCodec(rawCodec{}))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SendMsg(snapshotHeader(t, member.ID("n2"), member.ID("n1"), 1<<40)); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		wg.Go(func() {
			// The server's answer, the size bound's refusal, ends the
			// stream (io.EOF from SendMsg says it ended already).
			err := st.RecvMsg(new([]byte))
			if status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "announces") {
				answered.Add(1)
			} else if ctx.Err() == nil {
				t.Errorf("a 1 TiB snapshot from a member: %v, want the size bound's refusal", err)
			}
		})
	}
	waitFor(t, 20*time.Second, "the announced sizes refused, or the heap grown", func() error {
		if grew := heapAlloc(t, s) - before; grew > 256<<20 {
			t.Fatalf("the member's heap grew by %d bytes", grew)
		}
		if n := answered.Load(); n != streams {
			return fmt.Errorf("%d of %d snapshot streams refused", n, streams)
		}
		return closed(conns)
	})
	if grew := heapAlloc(t, s) - before; grew > 64<<20 {
		t.Errorf("the member's heap grew by %d bytes for %d messages of 60 MiB and %d snapshots of 1 TiB announced", grew, streams, streams)
	}
	if _, stderr, code := s.cli("exec", "-e", "CREATE KEYSPACE after WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"); code != 0 {
		t.Fatalf("a DDL after the streams: exit %d: %s", code, stderr)
	}
}

// closed returns nil once every log stream in conns was closed by the
// server.
func closed(conns []net.Conn) error {
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := io.Copy(io.Discard, c); err != nil {
			return fmt.Errorf("log stream %d still open", i)
		}
	}
	return nil
}
