package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/member"
)

// stoppedDataDir is the data dir of a one-member cluster that created a
// keyspace and a few tables, then stopped.
func stoppedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	m, err := member.Start(member.Config{Name: "n1", DataDir: dir, PeerAddr: "127.0.0.1:0", SnapshotEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stmts := []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}
	for i := range 5 {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY)", i))
	}
	for _, s := range stmts {
		for {
			_, err := m.Writes().Execute(ctx, member.Request{Statements: s})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond) // not ready yet
		}
	}
	return dir
}

func TestCheckDataDirCommand(t *testing.T) {
	dir := stoppedDataDir(t)
	out, err := runErr(t, "check", "data-dir", dir)
	if err != nil {
		t.Fatalf("clean dir: %v\n%s", err, out)
	}
	for _, want := range []string{"raft.db ", "schema.db ", "wal/0000000000000001.wal ", "agreement ", "verdict: clean"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "DAMAGED") {
		t.Errorf("a clean dir has damages:\n%s", out)
	}

	snaps, _ := filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot file")
	}
	b, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(snaps[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	name, _ := filepath.Rel(dir, snaps[0])
	out, err = runErr(t, "check", "data-dir", dir)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("damaged dir: error %v\n%s", err, out)
	}
	if !strings.Contains(out, name) || !strings.Contains(out, "DAMAGED  checksum") || !strings.Contains(out, "verdict: damaged") {
		t.Errorf("output does not name the damaged %s:\n%s", name, out)
	}

	out, err = runErr(t, "check", "data-dir", "--json", dir)
	if err == nil {
		t.Fatal("damaged dir, --json: no error")
	}
	var r member.DataDirReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if r.Verdict != member.VerdictDamaged || len(r.Findings) == 0 || r.Findings[0].File != name || !r.Findings[0].Damaged {
		t.Errorf("--json says %+v", r)
	}
}
