package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
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
	resp, err := s.client().ListMembers(context.Background(), &pb.ListMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, m := range resp.Members {
		roles[m.Name] = m.Role
	}
	return roles
}

// TestObservers: two observers join a cluster of three voters, the second
// after the log was compacted (it catches up through a snapshot). They are
// never promoted; they answer reads, local and linearizable, as the voters
// do, and forward the DDL sent to them; a feed on one goes on on the other
// when it is killed, every epoch once and in order; with both killed the
// voters still commit; cluster remove removes one.
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
	if got := rolesIn(t, voters[1]); len(got) != 3 {
		t.Fatalf("members after removing the observers: %v", got)
	}
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
	watcher, err := client.New(client.Config{Endpoints: []string{o1.grpcAddr, o2.grpcAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	from := uint64(0)
	feed := watcher.Follow(wctx, &pb.WatchRequest{FromEpoch: &from})
	var got []uint64
	next := func() uint64 {
		select {
		case r, ok := <-feed:
			if !ok || r.Err != nil {
				t.Fatalf("feed ended: %v", r.Err)
			}
			for i, e := range r.Response.Events {
				// An atomic change has several events in one epoch,
				// all in one message.
				if i == 0 || e.Epoch != r.Response.Events[i-1].Epoch {
					got = append(got, e.Epoch)
				}
			}
			return r.Response.Epoch
		case <-time.After(30 * time.Second):
			t.Fatalf("no message for 30s; %d epochs seen", len(got))
			return 0
		}
	}
	for next() < 10 {
	}
	o1.kill()
	var eps []string
	for _, s := range c.servers[:3] {
		eps = append(eps, s.grpcAddr)
	}
	load := startDDLLoad(t, ctx, eps, "obs", 2)
	for load.acked.Load() < 20 {
		next()
	}
	load.stop()
	r, err := c.servers[0].client().GetSchema(ctx, &pb.GetSchemaRequest{Consistency: "linearizable"})
	if err != nil {
		t.Fatal(err)
	}
	for len(got) == 0 || got[len(got)-1] < r.Epoch {
		next()
	}
	for i, e := range got {
		if e != uint64(i+1) {
			t.Fatalf("epoch %d at position %d of the feed, want %d: every epoch once, in order (%d epochs)", e, i, i+1, len(got))
		}
	}
	if got[len(got)-1] != r.Epoch {
		t.Fatalf("the feed ends at epoch %d, want %d", got[len(got)-1], r.Epoch)
	}
}
