package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestJoinCatchUpAndRemove grows a 3-member cluster holding 5,000 tables
// with `cluster add` + `serve --join`, checks the new member catches up to
// the same digest and becomes a voter, then removes a member with `cluster
// remove`: it stops by itself and the rest keep committing.
func TestJoinCatchUpAndRemove(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	tables := 5000
	if testing.Short() {
		tables = 500
	}
	const perRequest = 500
	for i := 0; i < tables; i += perRequest {
		var b strings.Builder
		for j := i; j < i+perRequest; j++ {
			fmt.Fprintf(&b, "CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text);\n", j)
		}
		if _, err := c.servers[i/perRequest%3].client().Execute(ctx, &pb.ExecuteRequest{Statements: b.String()}); err != nil {
			t.Fatalf("creating tables %d..: %v", i, err)
		}
	}
	want, _ := c.waitSameDigest()

	// Add n4 and start it with --join.
	n4 := newServer(t)
	out, stderr, rc := c.servers[1].cli("cluster", "add", "--name", "n4", "--peer-addr", n4.peers)
	if rc != 0 || !strings.Contains(out, "as a learner") {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	n4.start("--name", "n4", "--join", c.servers[1].grpcAddr)
	c.servers = append(c.servers, n4)
	c.names = append(c.names, "n4")
	got, _ := c.waitSameDigest()
	if got != want {
		t.Fatalf("digest changed while n4 joined: %s, want %s", got, want)
	}
	waitFor(t, 30*time.Second, "n4 promoted to voter", func() error {
		out, _, _ := c.servers[0].cli("cluster", "status")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "n4 ") && strings.Contains(line, " voter ") {
				return nil
			}
		}
		return fmt.Errorf("status:\n%s", out)
	})
	if names, _ := tableNames(t, n4.client(), "ks"); len(names) != tables {
		t.Fatalf("n4 has %d tables, want %d", len(names), tables)
	}

	// Remove n2: it stops cleanly by itself, the others go on.
	out, stderr, rc = c.servers[0].cli("cluster", "remove", "n2")
	if rc != 0 {
		t.Fatalf("cluster remove n2: rc=%d %s %s", rc, out, stderr)
	}
	removed := c.servers[1]
	select {
	case <-removed.exited:
		if code := removed.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("removed member exited with %d: %s", code, removed.stderr.String())
		}
		if strings.Contains(removed.stderr.String(), "level=ERROR") {
			t.Errorf("a clean removal logged an ERROR:\n%s", removed.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("removed member did not stop: %s", removed.stderr.String())
	}
	for i := range 3 {
		if _, err := n4.client().Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.after_%d (id int PRIMARY KEY)", i)}); err != nil {
			t.Fatalf("DDL after the removal: %v", err)
		}
	}
	_, epoch := c.waitSameDigest()
	if want := uint64(1 + tables + 3); epoch != want {
		t.Fatalf("epoch %d, want %d", epoch, want)
	}
	out, _, _ = c.servers[0].cli("cluster", "status")
	if strings.Contains(out, "\nn2 ") {
		t.Fatalf("n2 still listed after removal:\n%s", out)
	}
}

// TestRemovedWhileDownStopsWhenBack: a member removed while it was down
// never applies its removal; started again, it hears from the leader that
// it was removed and exits cleanly, and its data dir is refused after.
func TestRemovedWhileDownStopsWhenBack(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: strings.Replace(createKS, "1}", "3}", 1)}); err != nil {
		t.Fatal(err)
	}
	c.waitSameDigest()
	gone := c.servers[2]
	gone.stop()
	if out, stderr, rc := c.servers[0].cli("cluster", "remove", "n3"); rc != 0 {
		t.Fatalf("cluster remove n3 while it is down: rc=%d %s %s", rc, out, stderr)
	}
	gone.startAsync()
	select {
	case <-gone.exited:
		if code := gone.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(gone.stderr.String(), "removed from the cluster") {
			t.Fatalf("removed member exited with %d:\n%s", code, gone.stderr.String())
		}
		if strings.Contains(gone.stderr.String(), "level=ERROR") {
			t.Errorf("a clean removal logged an ERROR:\n%s", gone.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("member removed while down still runs:\n%s", gone.stderr.String())
	}
	if _, stderr, rc := runBinary(t, gone.serveArgs()...); rc == 0 || !strings.Contains(stderr, "left the cluster") {
		t.Errorf("serve on the removed member's data dir: rc=%d %s", rc, stderr)
	}
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.after (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("DDL after the removal: %v", err)
	}
}
