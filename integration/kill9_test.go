package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// tableNames lists the tables of keyspace ks.
func tableNames(t *testing.T, c pb.MetadataServiceClient, ks string) (map[string]bool, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := c.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: ks})
	if err != nil {
		t.Fatalf("GetKeyspace %s: %v", ks, err)
	}
	names := map[string]bool{}
	for _, tb := range r.Keyspace.Tables {
		names[tb.Name] = true
	}
	return names, r.Epoch
}

// streamDDL creates tables <prefix>_0, _1, ... one at a time until a request
// fails, and returns the names that were acknowledged, in order, plus the
// one that was in flight when it stopped.
func streamDDL(c pb.MetadataServiceClient, prefix string, stop <-chan struct{}) (acked []string, inFlight string) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return acked, ""
		default:
		}
		name := fmt.Sprintf("%s_%d", prefix, i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks." + name + " (id int PRIMARY KEY, v text)"})
		cancel()
		if err != nil {
			return acked, name
		}
		acked = append(acked, name)
	}
}

// TestKill9LosesNothingAcknowledged kills the server with SIGKILL while a
// client streams DDL, with the schema store flush coalesced behind the
// default 1s window, and checks after every restart that each acknowledged
// change is there exactly once. At the end a node that replays the same log
// from scratch must reach the same schema.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	s := newServer(t)
	s.start()
	c := s.client()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.first_%d (id int PRIMARY KEY)", i)}); err != nil {
			t.Fatal(err)
		}
	}
	s.kill()
	s.start()
	if names, _ := tableNames(t, s.client(), "ks"); len(names) != 30 {
		t.Fatalf("after kill -9: %d tables, want 30", len(names))
	}

	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	total := 30
	for round := range rounds {
		c := s.client()
		stop := make(chan struct{})
		var acked []string
		var inFlight string
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			acked, inFlight = streamDDL(c, fmt.Sprintf("r%d", round), stop)
		}()
		time.Sleep(time.Duration(20+rand.IntN(300)) * time.Millisecond) // a random moment to kill at
		s.kill()
		close(stop)
		wg.Wait()

		s.start()
		names, epoch := tableNames(t, s.client(), "ks")
		for _, n := range acked {
			if !names[n] {
				t.Fatalf("round %d: acknowledged table %s missing after kill -9", round, n)
			}
		}
		extra := 0
		prefix := fmt.Sprintf("r%d_", round)
		for n := range names {
			if strings.HasPrefix(n, prefix) && !slices.Contains(acked, n) {
				if n != inFlight {
					t.Fatalf("round %d: table %s present but neither acknowledged nor in flight (%q)", round, n, inFlight)
				}
				extra++
			}
		}
		total += len(acked) + extra
		// Each CREATE adds one to the epoch: none applied twice.
		if len(names) != total || epoch != uint64(total+1) {
			t.Fatalf("round %d: %d tables at epoch %d, want %d tables at epoch %d", round, len(names), epoch, total, total+1)
		}
	}
	before, _, _ := s.cli("describe")
	want := schemaDigest(t, s.client())
	s.stop()

	// A fresh replay of the same log (no schema store) reaches the same schema.
	replay := newServer(t)
	if err := os.MkdirAll(replay.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The raft log: raft.db, the WAL segments and any snapshots; no schema.db.
	copyFile(t, filepath.Join(s.dir, "raft.db"), filepath.Join(replay.dir, "raft.db"))
	for _, sub := range []string{"wal", "snap"} {
		files, _ := filepath.Glob(filepath.Join(s.dir, sub, "*"))
		for _, f := range files {
			os.MkdirAll(filepath.Join(replay.dir, sub), 0o755)
			copyFile(t, f, filepath.Join(replay.dir, sub, filepath.Base(f)))
		}
	}
	replay.start()
	after, _, _ := replay.cli("describe")
	if after != before {
		t.Fatalf("replaying the log from scratch gives a different schema:\nstore:\n%s\nreplay:\n%s", before, after)
	}
	if got := schemaDigest(t, replay.client()); got != want {
		t.Fatalf("digest after a fresh replay %s, want %s", got, want)
	}
}

// schemaDigest returns the digest of the node's whole schema.
func schemaDigest(t *testing.T, c pb.MetadataServiceClient) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Digest) != 64 {
		t.Fatalf("digest %q is not 32 bytes of hex", r.Digest)
	}
	return r.Digest
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
