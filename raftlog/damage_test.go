package raftlog

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
)

// TestDamagedRaftDB: a damaged raft.db fails openStorage, Inspect and
// ReadLogState with an error matching ErrDamaged that names the file and the
// kind of damage, never with a panic.
func TestDamagedRaftDB(t *testing.T) {
	for name, tc := range map[string]struct {
		kind   string
		damage func(t *testing.T, path string)
	}{
		"root page header zeroed": {boltcheck.KindPages, func(t *testing.T, path string) {
			// Each meta page holds, after the 16-byte page header, the
			// magic, version, page size and flags, then the root page.
			b := readFile(t, path)
			size := int(binary.LittleEndian.Uint32(b[24:]))
			for _, meta := range []int{0, size} {
				root := int(binary.LittleEndian.Uint64(b[meta+32:]))
				clear(b[root*size:][:16])
			}
			writeFile(t, path, b)
		}},
		"cut short": {boltcheck.KindPages, func(t *testing.T, path string) {
			b := readFile(t, path)
			writeFile(t, path, b[:3*int(binary.LittleEndian.Uint32(b[24:]))+100])
		}},
		"hard state garbage": {DamageRecord, func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Update(func(tx *bolt.Tx) error {
				return vaultOf(tx, bucketMeta).put(keyHardState, []byte{0xff, 0xff, 0xff})
			}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fillLog(t, dir)
			path := filepath.Join(dir, storageFile)
			tc.damage(t, path)
			_, err := openStorage(dir, defaultLockTimeout, nil)
			checkDamage(t, "openStorage", err, path, tc.kind)
			_, err = ReadLogState(dir)
			checkDamage(t, "ReadLogState", err, path, tc.kind)
			if tc.kind == boltcheck.KindPages {
				// Inspect reads no hard state.
				_, err = Inspect(dir)
				checkDamage(t, "Inspect", err, path, tc.kind)
			}
		})
	}
}

func checkDamage(t *testing.T, call string, err error, path, kind string) {
	t.Helper()
	var d *boltcheck.Error
	if !errors.Is(err, ErrDamaged) || !errors.As(err, &d) || d.File != path || d.Kind != kind || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: err = %v, want a damage of kind %s naming %s", call, err, kind, path)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGuardBolt: a panic while reading a bbolt file is a damage naming it.
func TestGuardBolt(t *testing.T) {
	err := boltcheck.Guard("/x/raft.db", func() error { panic("page 7: invalid page type") })
	checkDamage(t, "boltcheck.Guard", err, "/x/raft.db", DamageRead)
}
