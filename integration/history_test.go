package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// historyOf returns every event a member keeps, one protojson line each,
// read a page at a time.
func historyOf(s *server) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var b strings.Builder
	from := uint64(0)
	for {
		r, err := s.client().History(ctx, &pb.HistoryRequest{FromEpoch: &from, Limit: 50})
		if err != nil {
			return "", err
		}
		for _, e := range r.Events {
			line, err := protojson.Marshal(e)
			if err != nil {
				return "", err
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if r.NextEpoch == nil {
			return b.String(), nil
		}
		from = r.GetNextEpoch()
	}
}

// describeAt returns a member's DESCRIBE of the schema at epoch.
func describeAt(s *server, epoch uint64) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{Format: "cql", AtEpoch: &epoch})
	if err != nil {
		return "", err
	}
	return r.Cql, nil
}

// historyDDL makes many epochs of every kind, a guardrail change among
// them.
func historyDDL(t *testing.T, c pb.MetadataServiceClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stmts := []string{ksRF3, "CREATE TYPE ks.addr (street text, city text)"}
	for i := range 30 {
		stmts = append(stmts,
			fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY, n int, home frozen<addr>)", i),
			fmt.Sprintf("CREATE INDEX ON ks.t%d (n); ALTER TABLE ks.t%d ADD v text", i, i))
		if i%3 == 0 {
			stmts = append(stmts, fmt.Sprintf("DROP TABLE ks.t%d", i))
		}
	}
	for _, s := range stmts {
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: s, Atomic: strings.Contains(s, "ALTER")}); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if _, err := c.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "500"}}); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryIdenticalOnEveryMember: after many epochs, with the log
// compacted by snapshots, every member answers the same history and the
// same schema at past epochs, including a member added afterwards (which
// got a snapshot and copied the history from the others) and a member that
// was repaired.
func TestHistoryIdenticalOnEveryMember(t *testing.T) {
	c := newCluster(t, 3, "--snapshot-interval-entries", "20", "--snapshot-catch-up-entries", "5")
	historyDDL(t, c.servers[c.leader()].client())
	_, epoch := c.waitSameDigest()

	n4 := newServer(t)
	if out, stderr, rc := c.servers[0].cli("cluster", "add", "--name", "n4", "--peer-addr", n4.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	n4.args = []string{"--name", "n4", "--join", c.servers[0].grpcAddr, "--snapshot-interval-entries", "20", "--snapshot-catch-up-entries", "5"}
	n4.start()
	c.servers = append(c.servers, n4)
	c.names = append(c.names, "n4")
	c.waitVoter("n4")
	if out, stderr, rc := c.servers[0].cli("cluster", "repair", "n2"); rc != 0 {
		t.Fatalf("cluster repair n2: rc=%d %s %s", rc, out, stderr)
	}
	c.waitSameDigest()

	want, err := historyOf(c.servers[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(want, "\n"); n < int(epoch) {
		t.Fatalf("%d events for %d epochs", n, epoch)
	}
	for i, s := range c.servers[1:] {
		waitFor(t, 30*time.Second, c.names[i+1]+"'s history", func() error {
			got, err := historyOf(s)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("history differs from n1's:\n%s\nwant:\n%s", got, want)
			}
			return nil
		})
	}
	for _, e := range []uint64{0, 1, 2, epoch / 3, epoch / 2, epoch - 1, epoch} {
		want, err := describeAt(c.servers[0], e)
		if err != nil {
			t.Fatalf("n1 at epoch %d: %v", e, err)
		}
		for i, s := range c.servers[1:] {
			got, err := describeAt(s, e)
			if err != nil || got != want {
				t.Fatalf("%s at epoch %d: %v\n%s\nwant:\n%s", c.names[i+1], e, err, got, want)
			}
		}
	}
	// (If this times out, n4 was not rebuilt from a snapshot.)
	n4.waitLog(10*time.Second, "history copied from a peer")
	if full, _ := describeAt(c.servers[0], epoch); !strings.Contains(full, "CREATE TABLE ks.t29") || strings.Contains(full, "CREATE TABLE ks.t0 ") {
		t.Fatalf("schema at the last epoch:\n%s", full)
	}
}

// TestHistoryRebuiltAfterKill9: the history of changes acknowledged just
// before a kill -9 (still waiting for the coalesced flush) is there after
// the restart, rebuilt from the raft log, the same as before.
func TestHistoryRebuiltAfterKill9(t *testing.T) {
	s := newServer(t)
	s.start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY)", i)}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := historyOf(s)
	if err != nil {
		t.Fatal(err)
	}
	s.kill()
	s.start()
	got, err := historyOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("history after kill -9:\n%s\nwant:\n%s", got, want)
	}
	if n := strings.Count(got, "\n"); n != 31 {
		t.Fatalf("%d events, want 31", n)
	}
}
