package boltcheck_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
)

// smallFile returns a small bbolt file of 512-byte pages written by txs
// transactions: nested and inline buckets, a branch page, an overflow
// value, and pages freed by later transactions; cut to the 4 KiB bbolt
// reads at least.
func smallFile(tb testing.TB, txs int) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "small.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: 512, NoFreelistSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	for tx := range txs {
		err = db.Update(func(tx0 *bolt.Tx) error {
			ks, err := tx0.CreateBucketIfNotExists([]byte("tables"))
			if err != nil {
				return err
			}
			b, err := ks.CreateBucketIfNotExists(fmt.Appendf(nil, "ks%d", tx))
			if err != nil {
				return err
			}
			for i := range 12 {
				if err := b.Put(fmt.Appendf(nil, "t%02d", i), fmt.Appendf(nil, "record %d of tx %d", i, tx)); err != nil {
					return err
				}
			}
			small, err := tx0.CreateBucketIfNotExists([]byte("small"))
			if err != nil {
				return err
			}
			return small.Put([]byte("big"), bytes.Repeat([]byte{byte(tx)}, 700))
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	sum, err := boltcheck.Verify(path)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b[:max(4096, int(sum.Pages)*sum.PageSize)]
}

// FuzzVerify checks arbitrary bytes: Verify never panics, reports every
// problem of a readable file as a damage, and a file it passes opens and
// reads in bbolt without a panic or a fault (a bbolt panic on a goroutine
// of its own kills the fuzzing worker, which reports the input too).
func FuzzVerify(f *testing.F) {
	b := smallFile(f, 3)
	f.Add(b)
	for p := 0; p < len(b); p += 512 {
		for _, o := range []int{0, 8, 10, 12, 16, 24, 40} {
			c := bytes.Clone(b)
			c[p+o] ^= 0x05
			f.Add(c)
		}
	}
	rng := rand.New(rand.NewPCG(30, 3))
	for range 32 {
		c := bytes.Clone(b)
		c[rng.IntN(len(c))] ^= byte(1 << rng.IntN(8))
		f.Add(c)
	}
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := boltcheck.Verify(path)
		if err != nil {
			if !errors.Is(err, boltcheck.ErrDamaged) {
				t.Fatalf("a readable file: %v is not a damage", err)
			}
			return
		}
		if err := readAll(path); err != nil {
			t.Fatalf("Verify passed the file, bbolt: %v", err)
		}
	})
}

// TestMetaPageFlagsAsBboltReadsThem: bbolt takes the meta page with the
// higher transaction id that has the right magic, version and checksum,
// whatever its page flags say (the header is outside the checksum).
// Verify must walk the tree of that same meta page: one that skipped it
// for its flags passed files whose newest tree was damaged, which bbolt
// then read and panicked on (found by FuzzStoreLoad).
func TestMetaPageFlagsAsBboltReadsThem(t *testing.T) {
	const ps = 512
	dir := t.TempDir()
	// Files whose newest meta page is page 0, and page 1.
	for _, txs := range []int{3, 4} {
		b := smallFile(t, txs)
		newest := 0
		if binary.LittleEndian.Uint64(b[ps+16+48:]) > binary.LittleEndian.Uint64(b[16+48:]) {
			newest = 1
		}
		root := binary.LittleEndian.Uint64(b[newest*ps+16+16:])
		for _, damageRoot := range []bool{false, true} {
			d := bytes.Clone(b)
			d[newest*ps+8] ^= 0x12 // the meta page's flags
			if damageRoot {
				binary.LittleEndian.PutUint64(d[int(root)*ps:], 1<<40) // the root page's id
			}
			name := fmt.Sprintf("meta page %d's flags, root page %d damaged %v", newest, root, damageRoot)
			path := filepath.Join(dir, fmt.Sprintf("%d-%v.db", txs, damageRoot))
			if err := os.WriteFile(path, d, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := boltcheck.Verify(path)
			switch {
			case damageRoot && !errors.Is(err, boltcheck.ErrDamaged):
				t.Errorf("%s: Verify: %v, want a damage", name, err)
			case !damageRoot && err != nil:
				t.Errorf("%s: Verify: %v, want none (bbolt reads the file)", name, err)
			}
			if err == nil {
				if err := readAll(path); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
	}
}
