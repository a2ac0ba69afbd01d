package metadata

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
)

// storeWithTables returns the dir of a closed store holding keyspace shop
// with tables t_0..t_9, a user type and an index, and the digest of its
// schema.
func storeWithTables(t *testing.T) (string, [32]byte) {
	t.Helper()
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL}, Command{Text: "CREATE TYPE shop.addr (street text)"})
	for i := range 10 {
		a.apply(Command{Text: "CREATE TABLE shop.t_" + string(rune('0'+i)) + " (id int PRIMARY KEY, v text)"})
	}
	a.apply(Command{Text: "CREATE INDEX t_1_v ON shop.t_1 (v)"}, Command{RequestID: "r1", Text: "CREATE TABLE shop.u (id int PRIMARY KEY)"})
	digest := sm.Current().Schema.Digest()
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, digest
}

// rawUpdate changes the store file of dir with bbolt directly, as damage
// or an old binary would: no seals are made.
func rawUpdate(t *testing.T, dir string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, storeFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// loadErr opens the store of dir and loads it, returning the error.
func loadErr(dir string) error {
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Load()
	return err
}

// TestStoreLoadFindsDamage changes one thing at a time in a sealed store
// the way damage would: a flipped bit in a value, a value moved to another
// key or keyspace, a record removed, the summary removed. Each fails the
// load with a damage of the kind, naming the file and where.
func TestStoreLoadFindsDamage(t *testing.T) {
	tables := func(tx *bolt.Tx, ks string) *bolt.Bucket {
		return tx.Bucket(familyBuckets[familyTables]).Bucket([]byte(ks))
	}
	for _, c := range []struct {
		name, kind, where string
		damage            func(tx *bolt.Tx) error
	}{
		{"bit flipped in a table", DamageChecksum, `tables/shop key "t_3"`, func(tx *bolt.Tx) error {
			v := append([]byte(nil), tables(tx, "shop").Get([]byte("t_3"))...)
			v[len(v)/2] ^= 0x04
			return tables(tx, "shop").Put([]byte("t_3"), v)
		}},
		{"bit flipped in a keyspace", DamageChecksum, `keyspaces key "shop"`, func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketKeyspaces)
			v := append([]byte(nil), b.Get([]byte("shop"))...)
			v[0] ^= 0x80
			return b.Put([]byte("shop"), v)
		}},
		{"value under another key", DamageChecksum, `tables/shop key "t_9"`, func(tx *bolt.Tx) error {
			return tables(tx, "shop").Put([]byte("t_9"), append([]byte(nil), tables(tx, "shop").Get([]byte("t_8"))...))
		}},
		{"keyspace bucket renamed", DamageChecksum, `tables/shoq key "t_0"`, func(tx *bolt.Tx) error {
			moved, err := tx.Bucket(familyBuckets[familyTables]).CreateBucket([]byte("shoq"))
			if err != nil {
				return err
			}
			err = tables(tx, "shop").ForEach(func(k, v []byte) error { return moved.Put(k, append([]byte(nil), v...)) })
			if err != nil {
				return err
			}
			return tx.Bucket(familyBuckets[familyTables]).DeleteBucket([]byte("shop"))
		}},
		{"request record flipped", DamageChecksum, `requests key "r1"`, func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketRequests)
			v := append([]byte(nil), b.Get([]byte("r1"))...)
			v[len(v)-1] ^= 1
			return b.Put([]byte("r1"), v)
		}},
		{"table record lost", DamageDigest, `meta key "summary"`, func(tx *bolt.Tx) error {
			return tables(tx, "shop").Delete([]byte("t_5"))
		}},
		{"summary lost", DamageRecord, `meta key "summary"`, func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Delete(keySummary)
		}},
		{"table bucket lost", DamageRecord, `bucket "tables"`, func(tx *bolt.Tx) error {
			return tx.DeleteBucket(familyBuckets[familyTables])
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := storeWithTables(t)
			rawUpdate(t, dir, c.damage)
			err := loadErr(dir)
			var d *boltcheck.Error
			if !errors.Is(err, ErrDamaged) || !errors.As(err, &d) {
				t.Fatalf("load: %v, want a damage", err)
			}
			if d.Kind != c.kind || d.Where != c.where || d.File != filepath.Join(dir, storeFile) {
				t.Fatalf("damage %+v, want kind %q at %q in %s", d, c.kind, c.where, filepath.Join(dir, storeFile))
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, storeFile)) {
				t.Fatalf("%q does not name the file", err)
			}
		})
	}
}

// TestStoreWrittenBeforeSealsIsSealedAtOpen turns a store back into the
// format of before seals (bare values, applied_index and epoch keys, no
// format or summary): it opens with the same schema, index and epoch, and
// is sealed from then on (a flipped bit is found, the summary checked).
func TestStoreWrittenBeforeSealsIsSealedAtOpen(t *testing.T) {
	dir, digest := storeWithTables(t)
	var index, epoch uint64
	rawUpdate(t, dir, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		sum, err := readSummary(inVault(meta, bucketMeta))
		if err != nil {
			return err
		}
		index, epoch = sum.index, sum.epoch
		var strip func(b *bolt.Bucket) error
		strip = func(b *bolt.Bucket) error {
			type kv struct{ k, v []byte }
			var vals []kv
			var nested [][]byte
			b.ForEach(func(k, v []byte) error {
				if v == nil {
					nested = append(nested, append([]byte(nil), k...))
				} else {
					vals = append(vals, kv{append([]byte(nil), k...), append([]byte(nil), v[:len(v)-sealSize]...)})
				}
				return nil
			})
			for _, e := range vals {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
			for _, n := range nested {
				if err := strip(b.Bucket(n)); err != nil {
					return err
				}
			}
			return nil
		}
		if err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return strip(b) }); err != nil {
			return err
		}
		for _, k := range [][]byte{keyFormat, keySummary} {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		if err := putUint64(meta, keyIndex, sum.index); err != nil {
			return err
		}
		return putUint64(meta, keyEpoch, sum.epoch)
	})
	sm := openSM(t, dir)
	m := sm.Current()
	if m.Schema.Digest() != digest || m.Index != index || m.Epoch != epoch || m.Schema.TableCount() != 11 {
		t.Fatalf("after the upgrade: %d tables at index %d epoch %d, want 11 at %d, %d, same digest", m.Schema.TableCount(), m.Index, m.Epoch, index, epoch)
	}
	if rec, ok := m.Requests.Get("r1"); !ok || rec.Index == 0 {
		t.Fatalf("request r1: %+v %v", rec, ok)
	}
	sm.Close()
	if err := loadErr(dir); err != nil {
		t.Fatalf("the sealed store: %v", err)
	}
	rawUpdate(t, dir, func(tx *bolt.Tx) error {
		b := tx.Bucket(familyBuckets[familyTables]).Bucket([]byte("shop"))
		v := append([]byte(nil), b.Get([]byte("t_2"))...)
		v[3] ^= 0x10
		return b.Put([]byte("t_2"), v)
	})
	if err := loadErr(dir); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a flipped bit after the upgrade: %v, want a damage", err)
	}
}

// TestStoreOfAnotherFormatIsRefused: a format this binary does not know
// is not read as damage, and not rewritten.
func TestStoreOfAnotherFormatIsRefused(t *testing.T) {
	dir, _ := storeWithTables(t)
	rawUpdate(t, dir, func(tx *bolt.Tx) error {
		var a arena
		return inVault(tx.Bucket(bucketMeta), bucketMeta).put(&a, keyFormat, func(b []byte) []byte { return append(b, 0, 0, 0, 0, 0, 0, 0, 3) })
	})
	err := loadErr(dir)
	if err == nil || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "format") {
		t.Fatalf("load: %v, want a refusal of the format", err)
	}
}
