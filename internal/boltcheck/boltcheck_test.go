package boltcheck_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
)

// writeFile writes a bbolt file with nested buckets, inline buckets and
// enough keys for branch pages and overflow values.
func writeFile(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range []string{"meta", "tables", "small"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		if err := tx.Bucket([]byte("small")).Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		tb := tx.Bucket([]byte("tables"))
		for ks := range 3 {
			b, err := tb.CreateBucket(fmt.Appendf(nil, "ks%d", ks))
			if err != nil {
				return err
			}
			for i := range 400 {
				if err := b.Put(fmt.Appendf(nil, "t%04d", i), fmt.Appendf(nil, "table record %d of keyspace %d, padded %0100d", i, ks, i)); err != nil {
					return err
				}
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("big"), make([]byte, 10000))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVerifySoundFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	writeFile(t, path)
	sum, err := boltcheck.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reached < 10 || sum.PageSize == 0 || uint64(sum.Reached) > sum.Pages {
		t.Fatalf("summary %+v: expected branch, leaf and overflow pages reached, within the pages in use", sum)
	}
}

// TestDamagedFilesNeverCrashBbolt damages a file at every page header
// and at a fixed-seed sample of other offsets. Verify must name the
// damage or pass the file; a file it passes must open and read in bbolt
// without a panic or a fault (bbolt's own consistency panic on open runs
// on a goroutine no one can recover: a miss here kills the test binary).
func TestDamagedFilesNeverCrashBbolt(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	writeFile(t, clean)
	orig, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	var offsets []int
	for p := 0; p < len(orig); p += pageSize {
		for _, o := range []int{0, 1, 8, 10, 11, 12, 16, 17, 20, 24, 28, 32, 36, 40} {
			offsets = append(offsets, p+o)
		}
	}
	rng := rand.New(rand.NewPCG(30, 1))
	for range 400 {
		offsets = append(offsets, rng.IntN(len(orig)))
	}
	damaged := filepath.Join(dir, "damaged.db")
	passed := 0
	for _, off := range offsets {
		for _, change := range []byte{0xff, 0x01, 0x80} {
			b := append([]byte(nil), orig...)
			b[off] ^= change
			if err := os.WriteFile(damaged, b, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := boltcheck.Verify(damaged)
			if err != nil {
				if !errors.Is(err, boltcheck.ErrDamaged) {
					t.Fatalf("offset %d: %v is not a damage", off, err)
				}
				continue
			}
			passed++
			if err := readAll(damaged); err != nil {
				t.Fatalf("offset %d ^%#x: Verify passed the file, bbolt: %v", off, change, err)
			}
		}
	}
	t.Logf("%d damaged files passed the page check (damage inside keys or values) and read without a panic", passed)
}

// readAll opens path as the stores do and reads every key of every bucket,
// turning a panic or a fault into an error.
func readAll(path string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		return nil // a refusal, not a crash
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		var walk func(b *bolt.Bucket) error
		walk = func(b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					if c := b.Bucket(k); c != nil {
						return walk(c)
					}
				}
				return nil
			})
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if b == nil {
				return fmt.Errorf("%q is not a bucket", name)
			}
			return walk(b)
		})
	})
	return nil
}

func TestVerifyTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	writeFile(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := boltcheck.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	inUse := int64(sum.Pages) * int64(sum.PageSize)
	if inUse > fi.Size() {
		t.Fatalf("%d bytes in use, the file has %d", inUse, fi.Size())
	}
	for _, size := range []int64{0, 100, 4096, 8192, inUse / 2, inUse - 4096} {
		b, _ := os.ReadFile(path)
		p := filepath.Join(t.TempDir(), "t.db")
		if err := os.WriteFile(p, b[:size], 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := boltcheck.Verify(p); !errors.Is(err, boltcheck.ErrDamaged) {
			t.Errorf("truncated to %d bytes: %v, want a damage", size, err)
		}
	}
}

// BenchmarkVerify checks a file the size of a store of 100,000 tables
// (about 50 MB in 12,000 pages).
func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 400)
	err = db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucket([]byte("tables"))
		if err != nil {
			return err
		}
		for ks := range 10 {
			kb, err := top.CreateBucket(fmt.Appendf(nil, "ks%d", ks))
			if err != nil {
				return err
			}
			for i := range 10000 {
				if err := kb.Put(fmt.Appendf(nil, "t_%06d", i), value); err != nil {
					return err
				}
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		sum, err := boltcheck.Verify(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Reached), "pages")
	}
}
