package member

import (
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/snapshot"
)

// TestVerifyBackupCounts: VerifyBackup counts each kind of object, views
// apart from tables.
func TestVerifyBackupCounts(t *testing.T) {
	g := guardrails.Defaults()
	g.MaterializedViewsEnabled, g.UserDefinedFunctionsEnabled = true, true
	m, _, _, err := (&metadata.ClusterMetadata{Guardrails: g}).Apply(metadata.Command{Text: `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE shop.addr (street text);
CREATE TABLE shop.users (id int PRIMARY KEY, email text, home frozen<addr>);
CREATE INDEX ON shop.users (home);
CREATE MATERIALIZED VIEW shop.by_email AS SELECT * FROM shop.users WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id);
CREATE FUNCTION shop.plus(s int, v int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + v;';
CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int INITCOND 0`}, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := VerifyBackup(snapshot.Encode(nil, &snapshot.Contents{Epoch: m.Epoch, Index: 1, Schema: m.Schema}))
	if err != nil {
		t.Fatal(err)
	}
	if st.Keyspaces != 1 || st.Tables != 1 || st.Views != 1 || st.Types != 1 || st.Indexes != 1 || st.Functions != 2 {
		t.Errorf("status %+v, want 1 keyspace, 1 table, 1 view, 1 type, 1 index and 2 functions", st)
	}
}

// TestBackupFileVerifyAndRestore: a member's backup checks out as a file
// and restores into a data dir that a member starts from with the
// backup's schema at its epoch; a damaged or truncated copy is refused
// (ErrBadBackup, naming the file) and restores nothing; a used data dir
// is refused.
func TestBackupFileVerifyAndRestore(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: writeKeyspace + "; CREATE TABLE shop.orders (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	data, view, err := m.Reads().Backup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	if err := os.WriteFile(good, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := VerifyBackupFile(good)
	digest := view.Schema.Digest()
	if err != nil || st.Epoch != view.Epoch || st.Index != view.Index || st.Keyspaces != 1 || st.Tables != 1 ||
		st.History != int(view.Epoch) || st.Bytes != len(data) || !st.ChecksumOK || st.Digest != hex.EncodeToString(digest[:]) {
		t.Fatalf("VerifyBackupFile: %+v, %v; want epoch %d index %d, 1 keyspace, 1 table, %d history records, %d bytes", st, err, view.Epoch, view.Index, view.Epoch, len(data))
	}
	if epoch, index, err := CheckBackup(data); err != nil || epoch != view.Epoch || index != view.Index {
		t.Errorf("CheckBackup: %d, %d, %v; want %d, %d", epoch, index, err, view.Epoch, view.Index)
	}

	damaged := append([]byte(nil), data...)
	damaged[len(damaged)/2] ^= 0xff
	for name, bad := range map[string][]byte{"damaged.snap": damaged, "truncated.snap": data[:len(data)-10]} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := VerifyBackupFile(path)
		if !errors.Is(err, ErrBadBackup) || !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), name) {
			t.Errorf("VerifyBackupFile(%s): %v, want ErrBadBackup naming the file", name, err)
		}
		target := filepath.Join(dir, "restored-"+name)
		if _, err := RestoreBackupFile(path, target, "n1", []InitialMember{{Name: "n1", PeerAddr: "127.0.0.1:1"}}); !errors.Is(err, ErrBadBackup) {
			t.Errorf("RestoreBackupFile(%s): %v, want ErrBadBackup", name, err)
		}
		if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused restore of %s made %s: %v", name, target, err)
		}
	}

	peer := freePeerAddr(t)
	initial := []InitialMember{{Name: "r1", PeerAddr: peer}}
	target := filepath.Join(dir, "restored")
	if _, err := RestoreBackupFile(good, target, "r2", initial); err == nil || !strings.Contains(err.Error(), "r2") {
		t.Errorf("restore as a member not in the initial cluster: %v", err)
	}
	rst, err := RestoreBackupFile(good, target, "r1", initial)
	if err != nil || *rst != *st {
		t.Fatalf("RestoreBackupFile: %+v, %v; want what VerifyBackupFile found, %+v", rst, err, st)
	}
	if _, err := RestoreBackupFile(good, target, "r1", initial); err == nil || !strings.Contains(err.Error(), "new data dir") {
		t.Errorf("a second restore into %s: %v, want a refusal asking for a new data dir", target, err)
	}
	r := startMember(t, func(c *Config) { c.Name, c.DataDir, c.PeerAddr, c.InitialCluster = "r1", target, peer, initial })
	cur := r.core.sm.Current()
	if _, ok := cur.Schema.Table("shop", "orders"); !ok || cur.Epoch != view.Epoch {
		t.Errorf("the restored member is at epoch %d (shop.orders there: %v), want the backup's %d with shop.orders", cur.Epoch, ok, view.Epoch)
	}
}

// freePeerAddr returns a loopback address nothing listens on now.
func freePeerAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
