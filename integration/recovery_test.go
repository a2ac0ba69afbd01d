package integration

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// clusterIDOf returns the cluster id s answers with, failing the test
// when it answers none.
func clusterIDOf(t *testing.T, s *server) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || list.ClusterId == "" {
		t.Fatalf("cluster id: %v %v", list, err)
	}
	return list.ClusterId
}

// dirSums returns a checksum of every file under dir, by path.
func dirSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		sums[path] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// TestLeftoverForceFlagOnAHealthyMemberIsRefused: a healthy member of a
// 3-member cluster restarted with --force-new-cluster still on its command
// line finds the two others answering: it refuses to start, naming them,
// its data dir is left as it was, and the cluster goes on.
func TestLeftoverForceFlagOnAHealthyMemberIsRefused(t *testing.T) {
	c, _ := newClusterWithKeyspace(t)
	n1 := c.servers[0]
	n1.stop()
	before := dirSums(t, n1.dir)
	n1.args = append(n1.args, "--force-new-cluster")
	n1.startAsync()
	if code := n1.waitExit(30 * time.Second); code != 1 {
		t.Fatalf("leftover --force-new-cluster on a healthy member: exit %d, want 1:\n%s", code, n1.stderr.String())
	}
	out := n1.stderr.String()
	for _, want := range []string{"--force-new-cluster refused", "n2 (" + c.servers[1].peers + ")", "n3 (" + c.servers[2].peers + ")", "Stop them first"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	after := dirSums(t, n1.dir)
	if len(after) != len(before) {
		t.Errorf("the refused start changed the files of the data dir: %d before, %d after", len(before), len(after))
	}
	for path, sum := range before {
		if after[path] != sum {
			t.Errorf("the refused start changed %s", path)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.servers[1].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.after (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("the cluster after the refusal: %v", err)
	}
	n1.args = n1.args[:len(n1.args)-1]
	n1.start()
	c.waitSameDigest()
}

// TestForceNewClusterAfterLosingTwo: two of three members are lost for
// good (kill -9, never started again); serve --force-new-cluster on the
// survivor makes it a cluster of one, with a new cluster id, holding
// every DDL it had applied. Restarted with the flag still given while it
// is alone, it warns once and forces nothing; two fresh members join it;
// restarted with the flag again, it finds them answering and refuses; the
// three agree.
func TestForceNewClusterAfterLosingTwo(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	createTables(t, c.servers[1].client(), "t", 0, 60, 3)
	// What the survivor had applied is what it keeps: with every member
	// at the same epoch, that is every acknowledged DDL. (A survivor
	// behind the others would lose what it never received: the README
	// says to pick the one with the highest applied index.)
	c.waitSameDigest()
	oldID := clusterIDOf(t, c.servers[0])
	survivor := c.servers[0]
	for _, s := range c.servers {
		s.kill()
	}
	survivor.start("--name", "n1", "--force-new-cluster")
	survivor.waitLog(10*time.Second, "is now the only voter of the new cluster")
	forcing := checkForcedID(t, survivor, oldID)
	if _, err := survivor.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.after (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("DDL after --force-new-cluster: %v", err)
	}
	if n := countTables(t, survivor, "t_"); n != 60 {
		t.Fatalf("the survivor holds %d of the 60 acknowledged tables", n)
	}

	// The flag left on the command line: alone, it is not forced again.
	survivor.stop()
	survivor.start()
	survivor.waitLog(10*time.Second, fmt.Sprintf("already forced at index %d; not forcing again; start without the flag", forcing.Index))
	if n := strings.Count(survivor.stderr.String(), "already forced at index"); n != 1 || strings.Contains(survivor.stderr.String(), "is now the only voter") {
		t.Errorf("restart with the flag still given: %d WARNs, or a new forcing:\n%s", n, survivor.stderr.String())
	}
	if id := clusterIDOf(t, survivor); id != forcing.To {
		t.Errorf("after the restart with the flag the cluster is %s, want %s still", id, forcing.To)
	}

	// Two fresh members join the new cluster.
	r := &cluster{t: t, servers: []*server{survivor}, names: []string{"n1"}}
	for _, name := range []string{"n4", "n5"} {
		s := newServer(t)
		if out, stderr, rc := survivor.cli("cluster", "add", "--name", name, "--peer-addr", s.peers); rc != 0 {
			t.Fatalf("cluster add %s: rc=%d %s %s", name, rc, out, stderr)
		}
		s.start("--name", name, "--join", survivor.grpcAddr)
		r.servers, r.names = append(r.servers, s), append(r.names, name)
		r.waitVoter(name)
		if id := clusterIDOf(t, s); id != forcing.To {
			t.Fatalf("%s joined cluster %s, want %s", name, id, forcing.To)
		}
	}
	// With members added since, the flag asks for a new forcing: they
	// answer, so it is refused, and they stay members.
	survivor.stop()
	survivor.startAsync()
	if code := survivor.waitExit(30 * time.Second); code != 1 || !strings.Contains(survivor.stderr.String(), "--force-new-cluster refused") {
		t.Fatalf("--force-new-cluster with n4 and n5 up: exit %d:\n%s", code, survivor.stderr.String())
	}
	survivor.start("--name", "n1")
	if _, err := r.servers[2].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.three_again (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	r.waitSameDigest()
	if out, stderr, rc := runBinary(t, "cluster", "check", "--endpoints", r.endpoints()); rc != 0 || !strings.Contains(out, "agreement: yes") {
		t.Fatalf("cluster check: rc=%d %s %s", rc, out, stderr)
	}
}

// checkForcedID checks that the forced member s answers for a new cluster,
// not oldID: in `cluster status --json` (every member's cluster_id) and in
// ListMembers, which records the forcing. It returns the forcing.
func checkForcedID(t *testing.T, s *server, oldID string) *pb.ClusterForcing {
	t.Helper()
	out, stderr, rc := s.cli("cluster", "status", "--json")
	var status struct {
		ClusterID string `json:"cluster_id"`
		Members   []struct {
			Name      string `json:"name"`
			ClusterID string `json:"cluster_id"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &status); rc != 0 || err != nil {
		t.Fatalf("cluster status --json: rc=%d %v %s %s", rc, err, out, stderr)
	}
	if status.ClusterID == "" || status.ClusterID == oldID || len(status.Members) != 1 || status.Members[0].ClusterID != status.ClusterID {
		t.Fatalf("cluster status --json after the forcing: %s; want one member of a new cluster (old %s)", out, oldID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || list.ClusterId != status.ClusterID || len(list.Forcings) != 1 {
		t.Fatalf("ListMembers after the forcing: %v %v", list, err)
	}
	f := list.Forcings[0]
	if f.From != oldID || f.To != list.ClusterId || f.Index == 0 || f.By != list.Members[0].Id {
		t.Fatalf("recorded forcing %v: want from %s to %s by %s at an index", f, oldID, list.ClusterId, list.Members[0].Id)
	}
	return f
}

// countTables counts the tables of s whose name starts with prefix.
func countTables(t *testing.T, s *server, prefix string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	schema, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range schema.Keyspaces {
		for _, tb := range k.Tables {
			if strings.HasPrefix(tb.Name, prefix) {
				n++
			}
		}
	}
	return n
}

// TestOldMembersStopAtFirstContactWithTheForcedMember: after n1 was forced
// into a new cluster, the lost members' old data dirs are started while
// n1 is down: they form a quorum of the old cluster and acknowledge DDL.
// Once n1 is up, each is refused at its first contact, says that its
// cluster was forced into a new one by n1 at the recorded index and that
// its data dir must not be started again, and exits 1 (and refuses to
// start again); n1 goes on serving, and `cluster check` over every
// endpoint finds no split.
func TestOldMembersStopAtFirstContactWithTheForcedMember(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	c.waitSameDigest()
	oldID := clusterIDOf(t, c.servers[0])
	for _, s := range c.servers {
		s.kill()
	}
	n1 := c.servers[0]
	n1.start("--name", "n1", "--force-new-cluster")
	forcing := checkForcedID(t, n1, oldID)
	n1.stop()

	old := c.servers[1:]
	for _, s := range old {
		s.startAsync()
	}
	for _, s := range old {
		if err := s.readyErr(30 * time.Second); err != nil {
			t.Fatalf("old member without n1: %v", err)
		}
	}
	if _, err := old[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE splitbrain WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"}); err != nil {
		t.Fatalf("the old members as a quorum of the old cluster: %v", err)
	}

	n1.start("--name", "n1")
	for i, s := range old {
		if code := s.waitExit(30 * time.Second); code != 1 {
			t.Fatalf("%s of the old cluster: exit %d, want 1:\n%s", c.names[i+1], code, s.stderr.String())
		}
		out := s.stderr.String()
		for _, want := range []string{"forced into the new cluster " + forcing.To, "by member n1", fmt.Sprintf("at index %d", forcing.Index), "must not be started again"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %q:\n%s", c.names[i+1], want, out)
			}
		}
		s.startAsync()
		if code := s.waitExit(30 * time.Second); code != 1 || !strings.Contains(s.stderr.String(), "must not be started again") {
			t.Errorf("%s started again: exit %d:\n%s", c.names[i+1], code, s.stderr.String())
		}
	}
	if !n1.running() {
		t.Fatalf("the forced member stopped:\n%s", n1.stderr.String())
	}
	if _, err := n1.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.after (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("the forced member after refusing the old ones: %v", err)
	}
	schema, err := n1.client().GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range schema.Keyspaces {
		if k.Name == "splitbrain" {
			t.Fatal("the old cluster's keyspace is in the forced member's schema")
		}
	}
	if out, stderr, rc := runBinary(t, "cluster", "check", "--endpoints", c.endpoints()); rc != 0 || !strings.Contains(out, "agreement: yes") || !strings.Contains(out, "no answer from") {
		t.Fatalf("cluster check over every endpoint: rc=%d\n%s%s", rc, out, stderr)
	}
}

// TestCheckOverTwoUnrelatedClusters: `cluster check` given the endpoints
// of two unrelated single-member clusters says they belong to two
// clusters, naming both ids, and exits 1; `cluster status` through one of
// them sees only its own.
func TestCheckOverTwoUnrelatedClusters(t *testing.T) {
	a, b := newServer(t), newServer(t)
	a.start("--name", "n1")
	b.start("--name", "n1")
	idA, idB := clusterIDOf(t, a), clusterIDOf(t, b)
	if idA == idB {
		t.Fatalf("two unrelated clusters share the id %s", idA)
	}
	out, stderr, rc := runBinary(t, "cluster", "check", "--endpoints", a.grpcAddr+","+b.grpcAddr)
	want := fmt.Sprintf("the endpoints belong to 2 clusters: %s (%s) and %s (%s)", idA, a.grpcAddr, idB, b.grpcAddr)
	if rc != 1 || !strings.Contains(out, "agreement: NO") || !strings.Contains(out, want) || !strings.Contains(stderr, want) {
		t.Fatalf("cluster check over two clusters: rc=%d\n%s%s\nwant %q", rc, out, stderr, want)
	}
	out, stderr, rc = runBinary(t, "cluster", "check", "--json", "--endpoints", a.grpcAddr+","+b.grpcAddr)
	var verdict struct {
		Agreement bool   `json:"agreement"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(out), &verdict); err != nil || rc != 1 || verdict.Agreement || verdict.Reason != want {
		t.Fatalf("cluster check --json over two clusters: rc=%d %v\n%s%s", rc, err, out, stderr)
	}
}
