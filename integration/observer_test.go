package integration

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// observerFlags make the members snapshot and compact their logs often,
// so that an observer added after some DDL catches up through a snapshot.
var observerFlags = []string{"--snapshot-interval-entries", "20", "--snapshot-catch-up-entries", "5"}

// addObserver adds an observer name with cluster add --observer through
// c's first member, and starts it with --join.
func (c *cluster) addObserver(name string) *server {
	c.t.Helper()
	s := newServer(c.t)
	out, stderr, rc := c.servers[0].cli("cluster", "add", "--observer", "--name", name, "--peer-addr", s.peers)
	if rc != 0 || !strings.Contains(out, "as an observer") {
		c.t.Fatalf("cluster add --observer %s: rc=%d %s %s", name, rc, out, stderr)
	}
	s.args = append([]string{"--name", name, "--join", c.servers[0].grpcAddr}, observerFlags...)
	s.start()
	return s
}

// rolesIn returns the role of each member, by name, as member s lists
// them (cluster status's ROLE).
func rolesIn(t *testing.T, s *server) map[string]string {
	t.Helper()
	roles := map[string]string{}
	for _, m := range listMembers(t, s) {
		roles[m.Name] = m.Role
	}
	return roles
}

// TestObservers: two observers join a cluster of three voters, the second
// after the log was compacted (it catches up through a snapshot). They are
// never promoted; they answer reads, local and linearizable, as the voters
// do, and forward the DDL sent to them; a feed on one goes on on the other
// when it is killed, every epoch once and in order; one frozen does not
// hold the voters' DDL up and catches up when thawed; with both killed
// the voters still commit; cluster remove removes one.
func TestObservers(t *testing.T) {
	c := newCluster(t, 3, observerFlags...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o1 := c.addObserver("o1")
	historyDDL(t, c.servers[c.leader()].client())
	o2 := c.addObserver("o2")
	// (If this times out, o2 was not rebuilt from a snapshot.)
	o2.waitLog(30*time.Second, "history copied from a peer")
	voters := c.servers
	c.servers = append(c.servers, o1, o2)
	c.names = append(c.names, "o1", "o2")
	c.waitSameDigest()
	want := map[string]string{"n1": "voter", "n2": "voter", "n3": "voter", "o1": "observer", "o2": "observer"}
	for _, s := range c.servers {
		if got := rolesIn(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("roles as a member sees them: %v, want %v", got, want)
		}
	}
	checkObserverReads(t, ctx, voters[0], o1)
	checkObserverWrite(t, ctx, o2, voters)
	checkObserverFeedFailover(t, ctx, c, o1, o2)

	checkPausedObserver(t, ctx, voters, o2)

	// Both observers down: the three voters still make a quorum.
	o2.kill()
	if out, stderr, rc := voters[0].cli("exec", "-e", "CREATE TABLE ks.after_observers (id int PRIMARY KEY)"); rc != 0 {
		t.Fatalf("DDL with every observer down: rc=%d %s %s", rc, out, stderr)
	}
	for _, name := range []string{"o1", "o2"} {
		if out, stderr, rc := voters[0].cli("cluster", "remove", name); rc != 0 {
			t.Fatalf("cluster remove %s: rc=%d %s %s", name, rc, out, stderr)
		}
	}
	c.servers, c.names = voters, c.names[:3]
	// cluster remove returns once the member that handled it applied the
	// removal; another voter applies it a moment later.
	waitFor(t, 30*time.Second, "the observers' removal on another voter", func() error {
		if got := rolesIn(t, voters[1]); len(got) != 3 {
			return fmt.Errorf("members: %v", got)
		}
		return nil
	})
}

// checkObserverReads: right after a DDL through voter, the observer o
// answers a linearizable read with it, and describes the schema as the
// voter does.
func checkObserverReads(t *testing.T, ctx context.Context, voter, o *server) {
	t.Helper()
	if _, err := voter.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.seen_by_observer (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	r, err := o.client().GetTable(ctx, &pb.GetTableRequest{Keyspace: "ks", Table: "seen_by_observer", Consistency: "linearizable"})
	if err != nil || r.GetTable().GetName() != "seen_by_observer" {
		t.Fatalf("linearizable read on the observer right after the DDL: %v %v", r, err)
	}
	wantOut, _, _ := voter.cli("describe", "ks")
	if got, stderr, rc := o.cli("describe", "ks"); rc != 0 || got != wantOut {
		t.Fatalf("describe on the observer: rc=%d %s\n%s\nwant (a voter's):\n%s", rc, stderr, got, wantOut)
	}
}

// checkObserverWrite: a DDL sent to the observer o is forwarded to the
// leader and applies on every voter.
func checkObserverWrite(t *testing.T, ctx context.Context, o *server, voters []*server) {
	t.Helper()
	if out, stderr, rc := o.cli("exec", "-e", "CREATE TABLE ks.through_observer (id int PRIMARY KEY)"); rc != 0 {
		t.Fatalf("DDL through the observer: rc=%d %s %s", rc, out, stderr)
	}
	for _, v := range voters {
		if _, err := v.client().GetTable(ctx, &pb.GetTableRequest{Keyspace: "ks", Table: "through_observer", Consistency: "linearizable"}); err != nil {
			t.Fatalf("the DDL sent to the observer, read on a voter: %v", err)
		}
	}
}

// checkObserverFeedFailover follows the feed from epoch 0 through a
// client whose endpoints are the observers, o1 first; o1 is killed while
// DDL goes through the voters, and the feed goes on on o2 with every
// epoch once, in order.
func checkObserverFeedFailover(t *testing.T, ctx context.Context, c *cluster, o1, o2 *server) {
	t.Helper()
	f := followFromZero(t, ctx, []string{o1.grpcAddr, o2.grpcAddr})
	for f.next() < 10 {
	}
	o1.kill()
	var eps []string
	for _, s := range c.servers[:3] {
		eps = append(eps, s.grpcAddr)
	}
	load := startDDLLoad(t, ctx, eps, "obs", 2)
	for load.acked.Load() < 20 {
		f.next()
	}
	load.stop()
	r, err := c.servers[0].client().GetSchema(ctx, &pb.GetSchemaRequest{Consistency: "linearizable"})
	if err != nil {
		t.Fatal(err)
	}
	f.readTo(r.Epoch)
	if f.got[len(f.got)-1] != r.Epoch {
		t.Fatalf("the feed ends at epoch %d, want %d", f.got[len(f.got)-1], r.Epoch)
	}
}

// checkPausedObserver: with observer o frozen (SIGSTOP), DDL through the
// voters commits as before; thawed, o catches up to the voters' epoch.
func checkPausedObserver(t *testing.T, ctx context.Context, voters []*server, o *server) {
	t.Helper()
	if err := syscall.Kill(o.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var epoch uint64
	for i := range 30 {
		r, err := voters[i%len(voters)].client().Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.while_paused_%d (id int PRIMARY KEY)", i)})
		if err != nil {
			t.Fatalf("DDL %d with an observer frozen: %v", i, err)
		}
		epoch = max(epoch, r.Epoch)
	}
	if err := syscall.Kill(o.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := o.client().GetSchema(ctx, &pb.GetSchemaRequest{MinEpoch: epoch}); err != nil {
		t.Fatalf("the thawed observer reaching epoch %d: %v", epoch, err)
	}
}
