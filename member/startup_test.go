package member

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClusterIDOfFoundingMembers: every founding member computes the same
// id from the same --initial-cluster, whatever the order; other members
// or addresses give another id.
func TestClusterIDOfFoundingMembers(t *testing.T) {
	a := []InitialMember{{"n1", "10.0.0.1:7071"}, {"n2", "10.0.0.2:7071"}, {"n3", "10.0.0.3:7071"}}
	b := []InitialMember{a[2], a[0], a[1]}
	if clusterIDOf(a, 0) != clusterIDOf(b, 0) || clusterIDOf(a, 0) == 0 {
		t.Fatalf("order changes the id: %x %x", clusterIDOf(a, 0), clusterIDOf(b, 0))
	}
	other := []InitialMember{a[0], a[1], {"n3", "10.0.0.9:7071"}}
	if clusterIDOf(a, 0) == clusterIDOf(other, 0) || clusterIDOf(a, 0) == clusterIDOf(a[:2], 0) {
		t.Fatal("different founding members share an id")
	}
	if clusterIDOf(a, 7) == clusterIDOf(a, 0) || clusterIDOf(a, 7) != clusterIDOf(b, 7) || clusterIDOf(a, 7) == clusterIDOf(a, 8) {
		t.Fatal("a restored cluster's id does not depend on its backup alone")
	}
}

// TestUnreadableSnapshotSaysHowToRecover: a member whose newest snapshot
// file is damaged does not start, and says how to rebuild it from the
// other members.
func TestUnreadableSnapshotSaysHowToRecover(t *testing.T) {
	dir := t.TempDir()
	m := startMember(t, func(c *Config) { c.DataDir, c.SnapshotEntries, c.SnapshotCatchUpEntries = dir, 5, 1 })
	ctx := testContext(t)
	for i := range 8 {
		if _, err := m.Writes().Execute(ctx, Request{Statements: fmt.Sprintf("CREATE KEYSPACE k%d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	var files []string
	for len(files) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no snapshot file written")
		}
		files, _ = filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
		time.Sleep(5 * time.Millisecond)
	}
	m.Close()
	files, _ = filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
	for _, f := range files {
		if err := os.WriteFile(f, []byte("damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m2, err := Start(Config{Name: "n1", DataDir: dir, PeerAddr: "127.0.0.1:0"})
	if err == nil {
		m2.Close()
		t.Fatal("a member with a damaged snapshot file started")
	}
	for _, want := range []string{"cannot be started", "cluster remove n1", "--join", "backup save"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
