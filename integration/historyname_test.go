package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// sameAddresses returns new servers (new data dirs) on the addresses of
// servers: the same peer addresses give a cluster bootstrapped or
// restored with the same --initial-cluster the same cluster id, and the
// same client addresses let a consumer resume on them.
func sameAddresses(t *testing.T, servers []*server) []*server {
	out := make([]*server, len(servers))
	for i, s := range servers {
		out[i] = newServer(t)
		out[i].grpcAddr, out[i].httpAddr, out[i].peers = s.grpcAddr, s.httpAddr, s.peers
	}
	return out
}

// startAs starts servers as the founding members n1, n2, ... of a
// cluster, after restoring the backup at path into each data dir when
// path is not "", and waits until they are ready.
func startAs(t *testing.T, servers []*server, path string) *cluster {
	t.Helper()
	c := &cluster{t: t, servers: servers}
	var ic []string
	for i, s := range servers {
		c.names = append(c.names, "n"+string(rune('1'+i)))
		ic = append(ic, c.names[i]+"="+s.peers)
	}
	initial := strings.Join(ic, ",")
	for i, s := range servers {
		if path != "" {
			if out, stderr, rc := runBinary(t, "backup", "restore", path, "--data-dir", s.dir, "--name", c.names[i], "--initial-cluster", initial); rc != 0 {
				t.Fatalf("backup restore %s: rc=%d %s %s", c.names[i], rc, out, stderr)
			}
		}
		s.args = []string{"--name", c.names[i], "--initial-cluster", initial}
		s.startAsync()
	}
	for _, s := range servers {
		if err := s.readyErr(30 * time.Second); err != nil {
			t.Fatalf("cluster not ready: %v", err)
		}
	}
	return c
}

// sharedIdentity returns the identity every member of c answers with,
// failing the test when two differ.
func sharedIdentity(t *testing.T, c *cluster) identity {
	t.Helper()
	id := identityOf(t, c.servers[0])
	for i, s := range c.servers[1:] {
		if got := identityOf(t, s); got != id {
			t.Errorf("%s answers %+v, %s %+v: want one identity", c.names[i+1], got, c.names[0], id)
		}
	}
	return id
}

// TestSameBackupRestoredTwiceGetsNewHistories: one backup restored twice,
// into new data dirs, with the same --initial-cluster (the same names and
// peer addresses) makes two clusters with the same cluster id, whose
// epochs after the backup's are different changes; their history ids
// differ. A consumer that followed the first to its epoch 5 and resumes on
// the second (on the same client addresses) ends with ErrHistoryChanged
// instead of going on with the second's epochs; a history read naming the
// first's id is refused with HISTORY_CHANGED. Every member of the second
// reports the same id, through a restart and a join.
func TestSameBackupRestoredTwiceGetsNewHistories(t *testing.T) {
	src := newCluster(t, 1)
	execAll(t, src.servers[0].client(), ks1, "CREATE TABLE ks.t1 (id int PRIMARY KEY)")
	path := filepath.Join(t.TempDir(), "backup.snap")
	if out, stderr, rc := src.servers[0].cli("backup", "save", path); rc != 0 || !strings.Contains(out, "epoch 2,") {
		t.Fatalf("backup save: rc=%d %s %s", rc, out, stderr)
	}
	src.servers[0].stop()

	first := startAs(t, []*server{newServer(t), newServer(t)}, path)
	firstID := sharedIdentity(t, first)
	execAll(t, first.servers[0].client(), "CREATE TABLE ks.first_a (id int PRIMARY KEY)", "CREATE TABLE ks.first_b (id int PRIMARY KEY)",
		"CREATE TABLE ks.first_c (id int PRIMARY KEY)")
	first.waitSameDigest()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := client.New(client.Config{Endpoints: strings.Split(first.endpoints(), ","), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	results := cl.Follow(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(2)})
	for seen := uint64(0); seen < 5; {
		r := <-results
		if r.Err != nil {
			t.Fatalf("follow: %v", r.Err)
		}
		if r.Response.GetHistoryId() != firstID.history {
			t.Fatalf("a watch message of history %q, the first cluster's is %s", r.Response.GetHistoryId(), firstID.history)
		}
		seen = r.Response.GetEpoch()
	}
	for _, s := range first.servers {
		s.stop()
	}

	second := startAs(t, sameAddresses(t, first.servers), path)
	secondID := sharedIdentity(t, second)
	if secondID.cluster != firstID.cluster {
		t.Fatalf("the second restore has cluster id %s, the first %s: the test wants the same --initial-cluster (were the peer ports taken?)", secondID.cluster, firstID.cluster)
	}
	if secondID.history == firstID.history {
		t.Fatalf("the same backup restored twice with the same --initial-cluster: both histories are %s", firstID.history)
	}
	execAll(t, second.servers[0].client(), "CREATE TABLE ks.second_a (id int PRIMARY KEY)")

	// Messages the first cluster sent before it stopped may still come;
	// none of the second's.
	for res := range results {
		if res.Err == nil {
			if res.Response.GetHistoryId() != firstID.history {
				t.Fatalf("follow resumed on the second restore: %v, want only the first cluster's messages, then ErrHistoryChanged", res.Response)
			}
			continue
		}
		if !errors.Is(res.Err, client.ErrHistoryChanged) {
			t.Fatalf("follow resumed on the second restore: %v, want ErrHistoryChanged", res.Err)
		}
		checkHistoryChanged(t, "follow's resume", res.Err, firstID, secondID)
		break
	}
	if ctx.Err() != nil {
		t.Fatal("follow did not end on the second restore")
	}
	_, err = second.servers[1].client().History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(2), HistoryId: firstID.history})
	checkHistoryChanged(t, "history", err, firstID, secondID)

	// A restart and a join keep the id.
	second.servers[1].stop()
	second.servers[1].start()
	joiner := newServer(t)
	if out, stderr, rc := second.servers[0].cli("cluster", "add", "--name", "n3", "--peer-addr", joiner.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	joiner.start("--name", "n3", "--join", second.servers[0].grpcAddr)
	second.servers, second.names = append(second.servers, joiner), append(second.names, "n3")
	second.waitVoter("n3")
	if got := sharedIdentity(t, second); got != secondID {
		t.Errorf("after a restart and a join the members answer %+v, before %+v", got, secondID)
	}
}

// TestBootstrapTwiceGetsNewHistories: a cluster bootstrapped from empty
// data dirs, stopped, and bootstrapped again from new empty data dirs
// with the same --initial-cluster has the same cluster id but a new
// history id, which every member reports; a watch naming the first id is
// refused with HISTORY_CHANGED.
func TestBootstrapTwiceGetsNewHistories(t *testing.T) {
	first := startAs(t, []*server{newServer(t), newServer(t)}, "")
	firstID := sharedIdentity(t, first)
	execAll(t, first.servers[0].client(), ks1)
	for _, s := range first.servers {
		s.stop()
	}
	second := startAs(t, sameAddresses(t, first.servers), "")
	secondID := sharedIdentity(t, second)
	if secondID.cluster != firstID.cluster {
		t.Fatalf("the second bootstrap has cluster id %s, the first %s: the test wants the same --initial-cluster (were the peer ports taken?)", secondID.cluster, firstID.cluster)
	}
	if secondID.history == firstID.history {
		t.Fatalf("two bootstraps with the same --initial-cluster: both histories are %s", firstID.history)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := second.servers[0].client().Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(1), HistoryId: firstID.history})
	if err == nil {
		_, err = w.Recv()
	}
	checkHistoryChanged(t, "watch", err, firstID, secondID)
}
