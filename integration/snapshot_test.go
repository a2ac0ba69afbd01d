package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// metric returns the value of an unlabelled metric from the server's
// /metrics, or -1 if it is absent.
func metric(t *testing.T, s *server, name string) float64 {
	t.Helper()
	_, body := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", "")
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// createTables creates tables prefix_from..prefix_to-1 in ks, in requests of
// per statements.
func createTables(t *testing.T, c pb.MetadataServiceClient, prefix string, from, to, per int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := from; i < to; i += per {
		var b strings.Builder
		for j := i; j < min(i+per, to); j++ {
			fmt.Fprintf(&b, "CREATE TABLE ks.%s_%d (id int PRIMARY KEY, v text);", prefix, j)
		}
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: b.String()}); err != nil {
			t.Fatalf("creating %s_%d..: %v", prefix, i, err)
		}
	}
}

// TestSnapshotSizeLimitFailsLoudly grows the metadata past 75% and then 100%
// of a 64 KiB max_mutation_size with the metadata_size guardrail off: one
// WARN and one warning metric at 75%; past 100% an ERROR naming the size and
// the limit, the failure metric, /readyz degraded; DDL is still accepted and
// nothing is lost across a restart.
func TestSnapshotSizeLimitFailsLoudly(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "metalog.yaml")
	os.WriteFile(cfg, []byte("max_mutation_size: 65536\nsnapshot_interval_entries: 2\nguardrails:\n  metadata_size_enabled: false\n  tables_warn_threshold: -1\n"), 0o600)
	s := newServer(t)
	s.start("--config", cfg)
	c := s.client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	if got := metric(t, s, "metalog_snapshot_max_bytes"); got != 65536 {
		t.Fatalf("metalog_snapshot_max_bytes = %v", got)
	}
	// About 31 bytes a table with its share of the remembered request
	// that created it, in the store snapshot's compressed file: 1,000
	// tables stay under 75% (about 30 KB), 1,800 pass it, 2,600 pass 100%.
	createTables(t, c, "t", 0, 1000, 50)
	waitFor(t, 10*time.Second, "a snapshot", func() error {
		if metric(t, s, "metalog_snapshots_total") < 1 {
			return fmt.Errorf("no snapshot yet")
		}
		return nil
	})
	if w := metric(t, s, "metalog_snapshot_size_warnings_total"); w != 0 {
		t.Fatalf("warning below 75%%: %v", w)
	}
	createTables(t, c, "t", 1000, 1800, 50)
	waitFor(t, 10*time.Second, "the 75% warning", func() error {
		if metric(t, s, "metalog_snapshot_size_warnings_total") != 1 {
			return fmt.Errorf("warnings = %v", metric(t, s, "metalog_snapshot_size_warnings_total"))
		}
		return nil
	})
	createTables(t, c, "t", 1800, 2600, 50)
	waitFor(t, 10*time.Second, "the store failure", func() error {
		if metric(t, s, "metalog_snapshot_store_failures_total") < 1 {
			return fmt.Errorf("no store failure yet")
		}
		return nil
	})
	s.waitLog(10*time.Second, `msg="metadata snapshot not stored"`)
	if n := strings.Count(s.stderr.String(), "passed 75% of max_mutation_size"); n != 1 {
		t.Fatalf("%d 75%% warnings in the log, want exactly 1", n)
	}
	if !regexp.MustCompile(`level=ERROR msg="metadata snapshot not stored".*snapshot of \d+ bytes exceeds max_mutation_size 65536`).MatchString(s.stderr.String()) {
		t.Fatalf("no ERROR naming the size and the limit in the log:\n%s", s.stderr.String())
	}
	code, body := httpDo(t, "GET", "http://"+s.httpAddr+"/readyz", "")
	if code != 200 || !strings.HasPrefix(body, "degraded:") || !strings.Contains(body, "max_mutation_size") {
		t.Fatalf("/readyz = %d %q, want a degraded report", code, body)
	}
	if metric(t, s, "metalog_degraded") != 1 {
		t.Fatal("metalog_degraded is not 1")
	}
	// DDL still works, and nothing is lost across a kill -9.
	createTables(t, c, "more", 0, 10, 5)
	want := schemaDigest(t, c)
	s.kill()
	s.start()
	if got := schemaDigest(t, s.client()); got != want {
		t.Fatalf("digest after restart %s, want %s", got, want)
	}
	if names, _ := tableNames(t, s.client(), "ks"); len(names) != 2610 {
		t.Fatalf("%d tables after restart, want 2610", len(names))
	}
}

// TestRestartFromSnapshotAndRebuildReplica takes snapshots every few
// entries, restarts a member from its snapshot plus the log tail (also with
// its schema store gone), and adds a fresh member to a cluster holding
// 20,000 tables: it catches up through the chunked snapshot.
func TestRestartFromSnapshotAndRebuildReplica(t *testing.T) {
	tables := 20000
	if testing.Short() {
		tables = 2000
	}
	c := newCluster(t, 3, "--snapshot-interval-entries", "10", "--snapshot-catch-up-entries", "5")
	cl := c.servers[0].client()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	createTables(t, cl, "t", 0, tables, 1000)
	// More entries: snapshots every 10 and compaction behind them.
	for i := range 30 {
		if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.s_%d (id int PRIMARY KEY)", i)}); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := c.waitSameDigest()

	// Restart a follower from snapshot + tail, once with its store removed.
	f := c.servers[(c.leader()+1)%3]
	f.stop()
	os.Remove(filepath.Join(f.dir, "schema.db"))
	f.start()
	if got, _ := c.waitSameDigest(); got != want {
		t.Fatalf("digest after restart without schema.db: %s, want %s", got, want)
	}

	// A fresh member joins and catches up.
	n4 := newServer(t)
	if out, stderr, rc := c.servers[0].cli("cluster", "add", "--name", "n4", "--peer-addr", n4.peers); rc != 0 {
		t.Fatalf("cluster add: %s %s", out, stderr)
	}
	n4.start("--name", "n4", "--join", c.servers[0].grpcAddr)
	c.servers = append(c.servers, n4)
	c.names = append(c.names, "n4")
	if got, _ := c.waitSameDigest(); got != want {
		t.Fatalf("n4 digest %s, want %s", got, want)
	}
	n4.waitLog(10*time.Second, "restored metadata snapshot") // it caught up through a snapshot
}
