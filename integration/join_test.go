package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// waitVoter waits until member name is a voter in `cluster status` asked of
// c's first member.
func (c *cluster) waitVoter(name string) {
	c.t.Helper()
	waitFor(c.t, 30*time.Second, name+" promoted to voter", func() error {
		out, _, _ := c.servers[0].cli("cluster", "status")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, name+" ") && strings.Contains(line, " voter ") {
				return nil
			}
		}
		return fmt.Errorf("status:\n%s", out)
	})
}

// dataDirHolds lists what of the member's state is in dir.
func dataDirHolds(dir string) []string {
	var found []string
	for _, name := range []string{"raft.db", "wal", "snap", "schema.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			found = append(found, name)
		}
	}
	return found
}

// waitExit waits for s to exit by itself and returns its exit code.
func (s *server) waitExit(limit time.Duration) int {
	s.t.Helper()
	select {
	case <-s.exited:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		s.t.Fatalf("server still runs after %v:\n%s", limit, s.stderr.String())
		return -1
	}
}

// newClusterWithKeyspace starts 3 members, creates a keyspace through
// the first and returns the cluster with the digest they agree on.
func newClusterWithKeyspace(t *testing.T) (*cluster, string) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	digest, _ := c.waitSameDigest()
	return c, digest
}

// TestFailedJoinWritesNothingAndJoinsLater: a joining member whose first
// start fails on a port clash (HTTP, gRPC or peer) writes nothing to its
// data dir, and started again with the port free it joins the cluster as
// a learner, catches up and is promoted: it never bootstraps a cluster of
// its own.
func TestFailedJoinWritesNothingAndJoinsLater(t *testing.T) {
	c, want := newClusterWithKeyspace(t)
	for i, port := range []string{"http", "grpc", "peer"} {
		name := fmt.Sprintf("j%d", i)
		s := newServer(t)
		if out, stderr, rc := c.servers[0].cli("cluster", "add", "--name", name, "--peer-addr", s.peers); rc != 0 {
			t.Fatalf("cluster add %s: rc=%d %s %s", name, rc, out, stderr)
		}
		taken := map[string]string{"http": s.httpAddr, "grpc": s.grpcAddr, "peer": s.peers}[port]
		blocker, err := net.Listen("tcp", taken)
		if err != nil {
			t.Fatal(err)
		}
		s.args = []string{"--name", name, "--join", c.servers[0].grpcAddr}
		s.startAsync()
		if code := s.waitExit(30 * time.Second); code == 0 || !strings.Contains(s.stderr.String(), "address already in use") {
			t.Fatalf("%s port taken: exit %d:\n%s", port, code, s.stderr.String())
		}
		if held := dataDirHolds(s.dir); len(held) > 0 {
			t.Fatalf("%s port taken: the failed start wrote %v to the data dir", port, held)
		}
		blocker.Close()
		s.start()
		c.servers = append(c.servers, s)
		c.names = append(c.names, name)
		c.waitVoter(name)
		if got, _ := c.waitSameDigest(); got != want {
			t.Fatalf("%s: digest %s after the join, want %s", name, got, want)
		}
		if strings.Contains(s.stderr.String(), "join=false") {
			t.Fatalf("%s started as a cluster of its own:\n%s", name, s.stderr.String())
		}
	}
}

// TestInterruptedJoinResumesOnlyAsAJoin: a member killed while its join
// had not completed (no leader replicated to it yet) refuses to start
// without --join, saying how to resume or start over, and with --join it
// resumes the join and catches up.
func TestInterruptedJoinResumesOnlyAsAJoin(t *testing.T) {
	c, want := newClusterWithKeyspace(t)
	n4 := newServer(t)
	if out, stderr, rc := c.servers[2].cli("cluster", "add", "--name", "n4", "--peer-addr", n4.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	// With n1 and n2 frozen, n3 has no leader: n4 gets the member list from
	// n3 but nobody replicates the log to it, so its join stays incomplete.
	for _, s := range c.servers[:2] {
		if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			for _, s := range c.servers[:2] {
				syscall.Kill(s.cmd.Process.Pid, syscall.SIGCONT)
			}
		}
	}
	defer thaw()
	waitFor(t, 30*time.Second, "n3 without a leader", func() error {
		code, body := httpDo(t, "GET", "http://"+c.servers[2].httpAddr+"/readyz", "")
		if code == http.StatusServiceUnavailable && strings.Contains(body, "no leader") {
			return nil
		}
		return fmt.Errorf("readyz %d %s", code, body)
	})
	n4.args = []string{"--name", "n4", "--join", c.servers[2].grpcAddr}
	n4.startAsync()
	waitFor(t, 30*time.Second, "n4 serving, its join not complete", func() error {
		resp, err := http.Get("http://" + n4.httpAddr + "/readyz")
		if err != nil {
			if !n4.running() {
				return errors.New("n4 exited: " + n4.stderr.String())
			}
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return errors.New("n4 is ready: its join completed without a leader?")
		}
		return nil
	})
	n4.kill()

	n4.args = []string{"--name", "n4"}
	n4.startAsync()
	if code := n4.waitExit(30 * time.Second); code == 0 || !strings.Contains(n4.stderr.String(), "did not complete") ||
		!strings.Contains(n4.stderr.String(), "--join") {
		t.Fatalf("restart of an incomplete join without --join: exit %d:\n%s", code, n4.stderr.String())
	}

	thaw()
	c.waitSameDigest()
	n4.args = []string{"--name", "n4", "--join", c.servers[2].grpcAddr}
	n4.start()
	c.servers = append(c.servers, n4)
	c.names = append(c.names, "n4")
	c.waitVoter("n4")
	if got, _ := c.waitSameDigest(); got != want {
		t.Fatalf("digest %s after the resumed join, want %s", got, want)
	}
}

// TestMemberOfAnotherClusterIsRefused: a member restarted on the data dir
// of another cluster where this cluster expects a new member refuses the
// leader's stream at the first contact with an error naming both clusters'
// ids, and never takes part; the cluster goes on. Without peer TLS
// nothing proves who sent the stream, so the member does not stop on its
// word (with peer TLS, a certified leader of another cluster stops it:
// raftlog's TestCertifiedLeaderOfAnotherClusterStopsTheMember). Its
// --join is logged as ignored.
func TestMemberOfAnotherClusterIsRefused(t *testing.T) {
	// Cluster B: one member, n3, on the peer address cluster A will give n3.
	other := newServer(t)
	other.start("--name", "n3")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := other.client().Execute(ctx, &pb.ExecuteRequest{Statements: createKS}); err != nil {
		t.Fatal(err)
	}
	bList, err := other.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || bList.ClusterId == "" {
		t.Fatalf("cluster B's id: %v %v", bList, err)
	}
	other.stop()

	c := newCluster(t, 3)
	aList, err := c.servers[0].client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || aList.ClusterId == "" || aList.ClusterId == bList.ClusterId {
		t.Fatalf("cluster A's id %q (B's %q): %v", aList.GetClusterId(), bList.ClusterId, err)
	}
	if out, stderr, rc := c.servers[0].cli("cluster", "add", "--name", "n3x", "--peer-addr", other.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	other.args = []string{"--name", "n3", "--join", c.servers[0].grpcAddr}
	other.startAsync()
	other.waitLog(30*time.Second, `msg="refused a log stream of another cluster"`)
	out := other.stderr.String()
	if !strings.Contains(out, "cluster id mismatch") || !strings.Contains(out, aList.ClusterId) || !strings.Contains(out, bList.ClusterId) {
		t.Fatalf("member of cluster B contacted by cluster A's leader: no refusal naming both clusters:\n%s", out)
	}
	if !strings.Contains(out, "are ignored") {
		t.Errorf("no warning that --join is ignored on an existing data dir:\n%s", out)
	}
	// It is still cluster B's, alone, and was told nothing of cluster A's
	// log.
	bNow, err := other.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || bNow.ClusterId != bList.ClusterId || len(bNow.Members) != 1 {
		t.Fatalf("member of cluster B after cluster A's leader sent to it: %v %v", bNow, err)
	}
	if _, err := c.servers[1].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatalf("cluster A after refusing the foreign member: %v", err)
	}
}
