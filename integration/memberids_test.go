package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/raftlog"
)

// addedID runs `cluster add --name name --peer-addr s.peers` through via
// and returns the id it printed.
func addedID(t *testing.T, via, s *server, name string) string {
	t.Helper()
	out, stderr, rc := via.cli("cluster", "add", "--name", name, "--peer-addr", s.peers)
	m := regexp.MustCompile(`added ` + name + ` \(id ([0-9a-f]+),`).FindStringSubmatch(out)
	if rc != 0 || m == nil {
		t.Fatalf("cluster add %s: rc=%d %s %s", name, rc, out, stderr)
	}
	return m[1]
}

// memberIDs returns the members ListMembers on s lists, name -> id.
func memberIDs(t *testing.T, s *server) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, m := range listMembers(t, s) {
		ids[m.Name] = m.Id
	}
	return ids
}

// listMembers returns the members ListMembers on s lists.
func listMembers(t *testing.T, s *server) []*pb.Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Members
}

// checkNoDeadVoter runs `cluster status` through s and fails unless it
// exits 0 (every member reachable) listing exactly want as voters.
func checkNoDeadVoter(t *testing.T, s *server, want ...string) {
	t.Helper()
	out, stderr, rc := s.cli("cluster", "status")
	var voters []string
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 4 && f[4] == "voter" {
			voters = append(voters, f[0])
		}
	}
	sort.Strings(voters)
	if rc != 0 || strings.Contains(out, "unreachable") || strings.Join(voters, ",") != strings.Join(want, ",") {
		t.Fatalf("cluster status: rc=%d, voters %v, want %v (all reachable):\n%s%s", rc, voters, want, out, stderr)
	}
}

// execOK runs one DDL statement on s.
func execOK(t *testing.T, s *server, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: stmt}); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// TestReAddSameNameThreeTimes removes n3 and adds it again, with a new data
// dir and --join, three times (removed while running, while down, while
// running): each new n3 gets an id the cluster never used, catches up,
// becomes a voter with the same digest, and DDL works throughout; `cluster
// status` never shows a dead voter. Then the removed incarnations' data
// dirs are started again: each stops as removed (told by the cluster, or
// refused at start having applied its removal) and the cluster goes on.
func TestReAddSameNameThreeTimes(t *testing.T) {
	c, _ := newClusterWithKeyspace(t)
	used := map[string]bool{}
	for _, id := range memberIDs(t, c.servers[0]) {
		used[id] = true
	}
	var old []*server
	for round := 1; round <= 3; round++ {
		cur := c.servers[2]
		whileDown := round == 2
		if whileDown {
			cur.kill()
		}
		if out, stderr, rc := c.servers[0].cli("cluster", "remove", "n3"); rc != 0 {
			t.Fatalf("round %d: cluster remove n3: rc=%d %s %s", round, rc, out, stderr)
		}
		if !whileDown {
			if code := cur.waitExit(30 * time.Second); code != 0 {
				t.Fatalf("round %d: the removed n3 exited with %d:\n%s", round, code, cur.stderr.String())
			}
		}
		old = append(old, cur)
		execOK(t, c.servers[1], fmt.Sprintf("CREATE TABLE ks.without_%d (id int PRIMARY KEY)", round))

		s := newServer(t)
		id := addedID(t, c.servers[0], s, "n3")
		if used[id] {
			t.Fatalf("round %d: the new n3 got id %s, used before (%v)", round, id, used)
		}
		used[id] = true
		s.start("--name", "n3", "--join", c.servers[0].grpcAddr)
		c.servers[2] = s
		c.waitVoter("n3")
		if got := memberIDs(t, c.servers[1])["n3"]; got != id {
			t.Fatalf("round %d: n3 listed with id %s, added with %s", round, got, id)
		}
		execOK(t, s, fmt.Sprintf("CREATE TABLE ks.with_%d (id int PRIMARY KEY)", round))
		c.waitSameDigest()
		if out, stderr, rc := s.cli("cluster", "check"); rc != 0 || !strings.Contains(out, "agreement: yes") {
			t.Fatalf("round %d: cluster check: rc=%d %s %s", round, rc, out, stderr)
		}
		checkNoDeadVoter(t, c.servers[0], "n1", "n2", "n3")
	}

	for i, o := range old {
		o.startAsync()
		code := o.waitExit(30 * time.Second)
		out := o.stderr.String()
		switch {
		case i == 1 && (code != 0 || !strings.Contains(out, "reports this member was removed")):
			t.Fatalf("the n3 removed while down, started again: exit %d:\n%s", code, out)
		case i != 1 && (code == 0 || !strings.Contains(out, "left the cluster")):
			t.Fatalf("the n3 removed while running (incarnation %d), started again: exit %d:\n%s", i+1, code, out)
		}
	}
	execOK(t, c.servers[2], "CREATE TABLE ks.after_all (id int PRIMARY KEY)")
	c.waitSameDigest()
	checkNoDeadVoter(t, c.servers[1], "n1", "n2", "n3")
}

// TestDamagedSnapshotProcedureAsWritten follows the README: a member whose
// newest snapshot file is damaged does not start, its error says what to
// do, and doing it (move the data dir away, `cluster remove`, `cluster add`
// under the same name and address, start with --join) brings it back with
// the others' data.
func TestDamagedSnapshotProcedureAsWritten(t *testing.T) {
	c := newCluster(t, 3, "--snapshot-interval-entries", "10", "--snapshot-catch-up-entries", "5")
	execOK(t, c.servers[0], ksRF3)
	createTables(t, c.servers[0].client(), "t", 0, 40, 1)
	want, _ := c.waitSameDigest()

	n3 := c.servers[2]
	n3.stop()
	snaps, _ := filepath.Glob(filepath.Join(n3.dir, "snap", "*.snap"))
	if len(snaps) == 0 {
		t.Fatal("n3 stored no snapshot")
	}
	sort.Strings(snaps)
	newest := snaps[len(snaps)-1]
	b, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(newest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	n3.startAsync()
	if code := n3.waitExit(30 * time.Second); code == 0 || !strings.Contains(n3.stderr.String(), "move its data dir away") ||
		!strings.Contains(n3.stderr.String(), "cluster remove n3") || !strings.Contains(n3.stderr.String(), "cluster add --name n3 --peer-addr "+n3.peers) {
		t.Fatalf("n3 with a damaged snapshot: exit %d:\n%s", code, n3.stderr.String())
	}

	// The procedure, as the error and the README give it.
	if err := os.Rename(n3.dir, n3.dir+".damaged"); err != nil {
		t.Fatal(err)
	}
	if out, stderr, rc := c.servers[0].cli("cluster", "remove", "n3"); rc != 0 {
		t.Fatalf("cluster remove n3: rc=%d %s %s", rc, out, stderr)
	}
	addedID(t, c.servers[0], n3, "n3")
	n3.start("--name", "n3", "--join", c.servers[0].grpcAddr)
	c.waitVoter("n3")
	if got, _ := c.waitSameDigest(); got != want {
		t.Fatalf("n3 rebuilt with digest %s, want %s", got, want)
	}
	execOK(t, n3, "CREATE TABLE ks.after (id int PRIMARY KEY)")
	c.waitSameDigest()
	checkNoDeadVoter(t, c.servers[0], "n1", "n2", "n3")
}

// TestAddedMemberKeepsItsID: a member added by `cluster add` runs with
// the id the cluster gave it (not the hash of its name), its data dir
// records it, and a restart keeps it.
func TestAddedMemberKeepsItsID(t *testing.T) {
	n1 := newServer(t)
	n1.start("--name", "n1")
	execOK(t, n1, createKS)
	n2 := newServer(t)
	id := addedID(t, n1, n2, "n2")
	if id == member.FormatID(member.ID("n2")) {
		t.Fatalf("the added n2 got the hash of its name as id (%s)", id)
	}
	n2.start("--name", "n2", "--join", n1.grpcAddr)
	c := &cluster{t: t, servers: []*server{n1, n2}, names: []string{"n1", "n2"}}
	c.waitVoter("n2")
	n2.waitLog(10*time.Second, "metalog serving")
	if !strings.Contains(n2.stderr.String(), "id="+id+" ") {
		t.Fatalf("n2 does not log its id %s:\n%s", id, n2.stderr.String())
	}
	n2.stop()
	dd, err := raftlog.Inspect(n2.dir)
	if err != nil || member.FormatID(dd.MemberID) != id {
		t.Fatalf("n2's data dir records member id %x (%v), want %s", dd.MemberID, err, id)
	}
	// Restarted without --join, as any member is: its log knows the
	// cluster, and no initial cluster is made up from its name.
	n2.start("--name", "n2")
	if got := memberIDs(t, n2)["n2"]; got != id {
		t.Fatalf("after a restart n2 is listed with id %s, want %s", got, id)
	}
	execOK(t, n2, "CREATE TABLE ks.after_restart (id int PRIMARY KEY)")
	c.waitSameDigest()
	if !strings.Contains(n2.stderr.String(), "id="+id+" ") {
		t.Fatalf("the restarted n2 does not log its id %s:\n%s", id, n2.stderr.String())
	}
}

// TestStrictReconfigurationCheck: with one of three voters killed, removing
// a live one would leave one reachable voter of two: it is refused, naming
// the unreachable member, nothing changes, and DDL goes on; removing the
// dead one is allowed. A cluster of two voters with one dead can commit
// nothing: the removal of the dead member, and an addition, are refused,
// saying to recover with --force-new-cluster.
func TestStrictReconfigurationCheck(t *testing.T) {
	c, _ := newClusterWithKeyspace(t)
	c.servers[2].kill()
	c.leader(0, 1)
	out, stderr, rc := c.servers[0].cli("cluster", "remove", "n2")
	if rc != 1 || !strings.Contains(stderr, "FailedPrecondition") || !strings.Contains(stderr, "remove member n2: refused") ||
		!strings.Contains(stderr, "n3 unreachable") {
		t.Fatalf("cluster remove n2 with n3 dead: rc=%d %s %s", rc, out, stderr)
	}
	t.Logf("cluster remove n2 with n3 dead: %s", stderr)
	ids := memberIDs(t, c.servers[0])
	if len(ids) != 3 {
		t.Fatalf("members after the refused removal: %v", ids)
	}
	execOK(t, c.servers[1], "CREATE TABLE ks.after_refusal (id int PRIMARY KEY)")

	if out, stderr, rc := c.servers[0].cli("cluster", "remove", "n3"); rc != 0 {
		t.Fatalf("cluster remove n3 (dead) with n1 and n2 up: rc=%d %s %s", rc, out, stderr)
	}
	execOK(t, c.servers[0], "CREATE TABLE ks.two_voters (id int PRIMARY KEY)")

	// Two voters, one dead: no change can commit.
	c.servers[1].kill()
	for _, args := range [][]string{
		{"cluster", "remove", "n2"},
		{"cluster", "add", "--name", "n4", "--peer-addr", freeAddr(t)},
	} {
		out, stderr, rc := c.servers[0].cli(args...)
		if rc != 1 || !strings.Contains(stderr, "FailedPrecondition") || !strings.Contains(stderr, "no quorum of voters reachable") ||
			!strings.Contains(stderr, "n2 unreachable") || !strings.Contains(stderr, "--force-new-cluster") {
			t.Fatalf("%s with n2 of {n1, n2} dead: rc=%d %s %s", strings.Join(args, " "), rc, out, stderr)
		}
		t.Logf("%s with n2 of {n1, n2} dead: %s", strings.Join(args, " "), stderr)
	}
	if ids := memberIDs(t, c.servers[0]); len(ids) != 2 {
		t.Fatalf("members after the refused changes: %v", ids)
	}
}
