package boltpack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/boltcheck"
)

// tree is a bucket's content for the tests: values and nested buckets.
type tree struct {
	values  map[string][]byte
	buckets map[string]*tree
}

// genTree draws a bucket nested at most depth levels, with a few large
// values (overflow pages) and buckets large enough to need branch pages.
func genTree(t *rapid.T, depth int, label string) *tree {
	tr := &tree{values: map[string][]byte{}, buckets: map[string]*tree{}}
	n := rapid.IntRange(0, 600).Draw(t, label+"n")
	for i := range n {
		k := fmt.Sprintf("k%06d", rapid.IntRange(0, 100000).Draw(t, fmt.Sprintf("%sk%d", label, i)))
		size := rapid.SampledFrom([]int{0, 1, 30, 200, 5000}).Draw(t, fmt.Sprintf("%sv%d", label, i))
		tr.values[k] = bytes.Repeat([]byte{byte(i)}, size)
	}
	if depth > 0 {
		for i := range rapid.IntRange(0, 3).Draw(t, label+"b") {
			k := fmt.Sprintf("b%d", i)
			tr.buckets[k] = genTree(t, depth-1, label+k+"/")
		}
	}
	return tr
}

// keys returns the keys of tr, values and buckets, in order.
func (tr *tree) keys() []string {
	var ks []string
	for k := range tr.values {
		ks = append(ks, k)
	}
	for k := range tr.buckets {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// pack writes tr into b.
func pack(b *Bucket, tr *tree) error {
	for _, k := range tr.keys() {
		if v, ok := tr.values[k]; ok {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
			continue
		}
		nb, err := b.Bucket([]byte(k))
		if err != nil {
			return err
		}
		if err := pack(nb, tr.buckets[k]); err != nil {
			return err
		}
		if err := nb.Close(); err != nil {
			return err
		}
	}
	return nil
}

// same compares bucket b of a bbolt file with tr.
func same(b *bolt.Bucket, tr *tree) error {
	var got []string
	err := b.ForEach(func(k, v []byte) error {
		got = append(got, string(k))
		if v == nil {
			sub, ok := tr.buckets[string(k)]
			if !ok {
				return fmt.Errorf("bucket %q is not expected", k)
			}
			return same(b.Bucket(k), sub)
		}
		if want, ok := tr.values[string(k)]; !ok || !bytes.Equal(v, want) {
			return fmt.Errorf("key %q: %d bytes, want %d", k, len(v), len(want))
		}
		return nil
	})
	if err == nil && !slices.Equal(got, tr.keys()) {
		err = fmt.Errorf("keys %d, want %d", len(got), len(tr.keys()))
	}
	return err
}

// writeFile packs the top-level buckets of root into a file in dir.
func writeFile(t testing.TB, dir string, root *tree, pageSize int) string {
	f := New(pageSize, 0)
	if err := pack(f.Root(), root); err != nil {
		t.Fatal(err)
	}
	image, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "packed.db")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// check runs bbolt's own consistency check over db.
func check(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
}

// TestPackedFileIsWhatBboltReads: whatever the buckets, the file passes
// boltcheck and bbolt's own check, reads back key for key, and bbolt
// goes on writing it (pages split, buckets grow out of inline).
func TestPackedFileIsWhatBboltReads(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		root := &tree{values: map[string][]byte{}, buckets: map[string]*tree{}}
		for i := range rapid.IntRange(1, 4).Draw(rt, "top") {
			root.buckets[fmt.Sprintf("top%d", i)] = genTree(rt, 2, fmt.Sprintf("%d/", i))
		}
		pageSize := rapid.SampledFrom([]int{1024, 4096}).Draw(rt, "pageSize")
		path := writeFile(t, t.TempDir(), root, pageSize)
		if _, err := boltcheck.Verify(path); err != nil {
			rt.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true})
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		if err := check(db); err != nil {
			rt.Fatal(err)
		}
		err = db.View(func(tx *bolt.Tx) error {
			return same(tx.Bucket([]byte("top0")), root.buckets["top0"])
		})
		if err != nil {
			rt.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("top0"))
			for i := range 300 {
				if err := b.Put(fmt.Appendf(nil, "k%06d", i*7), bytes.Repeat([]byte{1}, 50)); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			// In a transaction of its own: bbolt loses track of pages a
			// transaction both allocates and frees with its bucket,
			// whatever wrote the file.
			err = db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("top0")) })
		}
		if err != nil {
			rt.Fatal(err)
		}
		if err := check(db); err != nil {
			rt.Fatal(err)
		}
	})
}

// TestOrder: keys out of order, and writes around an open nested bucket,
// are refused.
func TestOrder(t *testing.T) {
	f := New(4096, 0)
	b, err := f.Root().Bucket([]byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Root().Put([]byte("c"), nil); !errors.Is(err, ErrOrder) {
		t.Fatalf("put beside an open bucket: %v", err)
	}
	if err := b.Put([]byte("2"), nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"2", "1", ""} {
		if err := b.Put([]byte(k), nil); !errors.Is(err, ErrOrder) {
			t.Fatalf("key %q after 2: %v", k, err)
		}
	}
	if _, err := f.Finish(); !errors.Is(err, ErrOrder) {
		t.Fatalf("finish with an open bucket: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); !errors.Is(err, ErrOrder) {
		t.Fatalf("second close: %v", err)
	}
	if err := f.Root().Put([]byte("a"), nil); !errors.Is(err, ErrOrder) {
		t.Fatalf("key a after b: %v", err)
	}
}

// TestPackAllocs: packing allocates per page and per bucket, not per key.
func TestPackAllocs(t *testing.T) {
	key, value := make([]byte, 0, 16), make([]byte, 40)
	allocs := testing.AllocsPerRun(5, func() {
		f := New(4096, 8<<20)
		b, _ := f.Root().Bucket([]byte("t"))
		for i := range 10_000 {
			key = strconv.AppendInt(key[:0], int64(100_000_000+i), 10)
			_ = b.Put(key, value)
		}
		_ = b.Close()
		_, _ = f.Finish()
	})
	// What is left is the levels' slices and the bucket.
	if allocs > 60 {
		t.Fatalf("%v allocations for 10,000 keys", allocs)
	}
}
