package member

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkedDataDir is the data dir of a stopped one-member cluster that
// created a keyspace and tables: with snapshots, a snapshot every 5
// entries and a log compacted behind it.
func checkedDataDir(t *testing.T, snapshots bool) string {
	t.Helper()
	dir := t.TempDir()
	m := startMember(t, func(c *Config) {
		c.DataDir = dir
		if snapshots {
			c.SnapshotEntries, c.SnapshotCatchUpEntries = 5, 1
		}
	})
	ctx := testContext(t)
	stmts := []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}
	for i := range 12 {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE ks.tbl%d (id int PRIMARY KEY, colmark%d text)", i, i))
	}
	for _, s := range stmts {
		if _, err := m.Writes().Execute(ctx, Request{Statements: s}); err != nil {
			t.Fatal(err)
		}
	}
	if snapshots {
		deadline := time.Now().Add(20 * time.Second)
		for files, _ := filepath.Glob(filepath.Join(dir, "snap", "*.snap")); len(files) < 2; files, _ = filepath.Glob(filepath.Join(dir, "snap", "*.snap")) {
			if time.Now().After(deadline) {
				t.Fatal("no snapshot files written")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if _, err := CheckDataDir(dir); !errors.Is(err, ErrDataDirInUse) {
		t.Errorf("checking the dir of a running member: %v, want ErrDataDirInUse", err)
	}
	m.Close()
	return dir
}

// hashDir hashes every file of dir by its path.
func hashDir(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkUnchanged checks the dir and that the check changed no file.
func checkUnchanged(t *testing.T, dir string) *DataDirReport {
	t.Helper()
	before := hashDir(t, dir)
	r, err := CheckDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	after := hashDir(t, dir)
	if len(after) != len(before) {
		t.Errorf("the check changed the files of the dir: %d before, %d after", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("the check changed %s", p)
		}
	}
	return r
}

func TestCheckDataDirClean(t *testing.T) {
	for _, snapshots := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshots=%v", snapshots), func(t *testing.T) {
			dir := checkedDataDir(t, snapshots)
			r := checkUnchanged(t, dir)
			if r.Verdict != VerdictClean || !r.Agreement.Checked || !r.Agreement.Agree {
				t.Fatalf("verdict %s, agreement %+v, findings %+v", r.Verdict, r.Agreement, r.Findings)
			}
			want := map[string]bool{"raft.db": true, "schema.db": true, "wal/0000000000000001.wal": true}
			snaps := 0
			for _, f := range r.Files {
				if f.Status != "ok" {
					t.Errorf("%s: %s", f.File, f.Status)
				}
				delete(want, f.File)
				if filepath.Dir(f.File) == "snap" {
					snaps++
				}
			}
			if len(want) > 0 {
				t.Errorf("not checked: %v (files %+v)", want, r.Files)
			}
			if snapshots && (snaps < 2 || r.Agreement.SnapshotIndex == 0) {
				t.Errorf("%d snapshot files checked, agreement from the snapshot at %d", snaps, r.Agreement.SnapshotIndex)
			}
			if r.Agreement.StoreIndex == 0 || r.Agreement.StoreEpoch != 13 {
				t.Errorf("agreement %+v, want the store at epoch 13", r.Agreement)
			}
		})
	}
}

// damage changes one byte of the file at path, at the offset find
// returns.
func damageByte(t *testing.T, path string, find func(b []byte) int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := find(b)
	if i < 0 || i >= len(b) {
		t.Fatalf("%s: nothing to damage", path)
	}
	b[i] ^= 0x5a
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// zeroRootPage zeroes the page of the root bucket of the bbolt file at
// path, as the newer of its meta pages names it.
func zeroRootPage(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(binary.LittleEndian.Uint32(b[16+8:]))
	meta := 0
	if binary.LittleEndian.Uint64(b[pageSize+16+48:]) > binary.LittleEndian.Uint64(b[16+48:]) {
		meta = pageSize
	}
	root := int(binary.LittleEndian.Uint64(b[meta+16+16:]))
	clear(b[root*pageSize : (root+1)*pageSize])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheckDataDirNamesTheDamagedFile(t *testing.T) {
	clean := checkedDataDir(t, true)
	newestSnap := func(dir string) string {
		files, _ := filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
		return files[len(files)-1]
	}
	for _, c := range []struct {
		name, file string
		kind       string
		damage     func(dir string)
	}{
		{"schema.db record", "schema.db", "checksum", func(dir string) {
			// Every copy: bbolt leaves old ones in pages no longer in use.
			path := filepath.Join(dir, "schema.db")
			for n := 0; ; n++ {
				b, _ := os.ReadFile(path)
				if !bytes.Contains(b, []byte("colmark7")) {
					if n == 0 {
						t.Fatal("no column colmark7 in schema.db")
					}
					break
				}
				damageByte(t, path, func(b []byte) int { return bytes.Index(b, []byte("colmark7")) + 3 })
			}
		}},
		{"raft.db page", "raft.db", "pages", func(dir string) { zeroRootPage(t, filepath.Join(dir, "raft.db")) }},
		{"wal record", "wal/0000000000000001.wal", "checksum", func(dir string) {
			damageByte(t, filepath.Join(dir, "wal", "0000000000000001.wal"), func([]byte) int { return 12 })
		}},
		{"snapshot byte", "", "checksum", func(dir string) {
			damageByte(t, newestSnap(dir), func(b []byte) int { return len(b) - 1 })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			c.damage(dir)
			file := c.file
			if file == "" {
				file, _ = filepath.Rel(dir, newestSnap(dir))
			}
			r := checkUnchanged(t, dir)
			if r.Verdict != VerdictDamaged {
				t.Fatalf("verdict %s, findings %+v", r.Verdict, r.Findings)
			}
			found := false
			for _, f := range r.Findings {
				found = found || (f.Damaged && f.File == file && f.Kind == c.kind)
			}
			if !found {
				t.Errorf("no %s damage of %s in %+v", c.kind, file, r.Findings)
			}
		})
	}
}

// TestCheckDataDirStoreAheadOfTheLog: a log that ends before the store's
// index (cut at a record boundary) is no damage, but the agreement cannot
// be checked, and the verdict says so.
func TestCheckDataDirStoreAheadOfTheLog(t *testing.T) {
	dir := checkedDataDir(t, false)
	path := filepath.Join(dir, "wal", "0000000000000001.wal")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := 0
	for range 3 { // the header is a checksum, a length, a type
		end += 9 + int(binary.BigEndian.Uint32(b[end+4:]))
	}
	if err := os.WriteFile(path, b[:end], 0o600); err != nil {
		t.Fatal(err)
	}
	r := checkUnchanged(t, dir)
	if r.Verdict != VerdictIncomplete || r.Agreement.Checked || !strings.Contains(r.Agreement.Reason, "past the last entry") {
		t.Fatalf("verdict %s, agreement %+v, findings %+v", r.Verdict, r.Agreement, r.Findings)
	}
}
