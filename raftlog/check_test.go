package raftlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckLog: a sound log reads back whole, without a damage; a held
// raft.db is ErrLocked; a torn last record is a note, not a damage.
func TestCheckLog(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	for i := uint64(1); i <= 9; i += 3 {
		if err := s.save(hardState(1, 1, i+2), ents(i, i+2, 1, "e"), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CheckLog(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("a log in use: %v, want ErrLocked", err)
	}
	s.Close()

	c, err := CheckLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Damaged() || !c.Readable || c.First != 1 || c.Last != 9 || c.Commit != 9 {
		t.Fatalf("sound log: first %d last %d commit %d, files %+v", c.First, c.Last, c.Commit, c.Files)
	}
	got, err := c.Entries(4, 10, 1<<20)
	if err != nil || len(got) != 6 || string(got[5].GetData()) != "e9" {
		t.Fatalf("Entries(4, 10): %v, %v", got, err)
	}
	c.Close()

	seg := filepath.Join(dir, walDirName, walFileName(1))
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	end := 0
	for !allZero(b[end:]) {
		_, n, _, err := parseWALRecord(b[end:])
		if err != nil {
			t.Fatal(err)
		}
		end += n
	}
	// A record whose checksum does not match, followed by the
	// preallocated zeros: a crash in the middle of its write.
	copy(b[end:], []byte{1, 2, 3, 4, 0, 0, 0, 3, walRecBatch, 7, 7, 7})
	if err := os.WriteFile(seg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = CheckLog(dir); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c.Damaged() || c.Last != 9 || !strings.Contains(c.Files[1].Note, "torn") {
		t.Fatalf("torn last record: last %d, files %+v", c.Last, c.Files)
	}
}
