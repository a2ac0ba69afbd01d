package raftlog

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
)

// sealedLog is the data dir of a single member that elected itself and
// applied its membership: raft.db holds a configuration, a member id and
// a member context.
func sealedLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	n := startSingle(t, dir, &recorder{}, 0)
	waitReady(t, n)
	n.Stop()
	return dir
}

// updateDB runs f on raft.db of dir, written by bbolt: values that still
// decode, not pages bbolt would refuse.
func updateDB(t *testing.T, dir string, f func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, storageFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(f); err != nil {
		t.Fatal(err)
	}
}

// flipValue changes a byte of the stored value under key of bucket, as a
// bit flip on disk would, leaving its seal as it was.
func flipValue(bucket, key []byte) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		v := append([]byte(nil), tx.Bucket(bucket).Get(key)...)
		v[len(v)/2-1] ^= 0x04
		return tx.Bucket(bucket).Put(key, v)
	}
}

// TestSealedRaftDBDamage: a raft.db whose values still decode but changed
// (a byte of a value, a key renamed, a required key missing, a bucket
// renamed) is refused as damaged, naming the file and the kind, by
// openStorage, Inspect and ReadLogState; a data dir that lost raft.db
// beside its write-ahead log too. None of them starts as a new log.
func TestSealedRaftDBDamage(t *testing.T) {
	for name, tc := range map[string]struct {
		kind   string
		damage func(tx *bolt.Tx) error
	}{
		"member id changed":  {DamageChecksum, flipValue(bucketMeta, keyMember)},
		"confstate changed":  {DamageChecksum, flipValue(bucketMeta, keyConfState)},
		"member ctx changed": {DamageChecksum, func(tx *bolt.Tx) error { return flipValue(bucketMembers, u64(1))(tx) }},
		"confstate key renamed": {DamageChecksum, func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			v := append([]byte(nil), meta.Get(keyConfState)...)
			if err := meta.Delete(keyConfState); err != nil {
				return err
			}
			return meta.Put([]byte("confstatd"), v)
		}},
		"confstate missing": {DamageMissing, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyConfState) }},
		"bucket renamed": {DamageRecord, func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucket([]byte("removee")); err != nil {
				return err
			}
			return tx.DeleteBucket(bucketRemoved)
		}},
		"format missing": {DamageMissing, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyFormat) }},
	} {
		t.Run(name, func(t *testing.T) {
			dir := sealedLog(t)
			updateDB(t, dir, tc.damage)
			checkRefused(t, dir, tc.kind)
		})
	}
	t.Run("raft.db removed", func(t *testing.T) {
		dir := sealedLog(t)
		if err := os.Remove(filepath.Join(dir, storageFile)); err != nil {
			t.Fatal(err)
		}
		checkRefused(t, dir, DamageMissing)
		if _, err := os.Stat(filepath.Join(dir, storageFile)); !os.IsNotExist(err) {
			t.Fatalf("the refused opens created raft.db: %v", err)
		}
	})
}

// checkRefused checks that every way of reading the log of dir refuses
// it, naming raft.db and kind.
func checkRefused(t *testing.T, dir, kind string) {
	t.Helper()
	path := filepath.Join(dir, storageFile)
	_, err := openStorage(dir, defaultLockTimeout, nil)
	checkDamage(t, "openStorage", err, path, kind)
	_, err = ReadLogState(dir)
	checkDamage(t, "ReadLogState", err, path, kind)
	if _, err := os.Stat(path); kind == DamageChecksum || os.IsNotExist(err) {
		// Inspect checks the seals and that raft.db is there, not the
		// keys and buckets an open requires.
		_, err = Inspect(dir)
		checkDamage(t, "Inspect", err, path, kind)
	}
	c, err := CheckLog(dir)
	if err != nil {
		t.Fatalf("CheckLog: %v", err)
	}
	defer c.Close()
	if !c.Damaged() {
		t.Errorf("CheckLog finds no damage")
	}
}

// TestSealFormat2 : a raft.db of format 2 (values without seals) opens as
// it did, sealed in place once: its state is the same, its format is
// sealed, and a value changed after is then caught.
func TestSealFormat2(t *testing.T) {
	dir := sealedLog(t)
	before := readStorageState(t, dir)
	updateDB(t, dir, unseal)
	dd, err := Inspect(dir)
	if err != nil || dd.MemberID != 1 || !dd.HasMembership {
		t.Fatalf("Inspect of a format 2 file: %+v %v", dd, err)
	}
	if got := readStorageState(t, dir); !bytes.Equal(got, before) {
		t.Fatalf("the state read after sealing a format 2 file differs:\n%x\n%x", got, before)
	}
	updateDB(t, dir, func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyFormat); len(v) != 8+sealSize || binary.BigEndian.Uint64(v) != storageFormat {
			t.Errorf("format after the open: %x", v)
		}
		return nil
	})
	n := startSingle(t, dir, &recorder{}, 0)
	waitReady(t, n)
	n.Stop()
	updateDB(t, dir, flipValue(bucketMeta, keyMember))
	checkRefused(t, dir, DamageChecksum)
}

// unseal rewrites a sealed raft.db as format 2 wrote it.
func unseal(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketMembers, bucketRemoved} {
		b := tx.Bucket(name)
		var ks, vs [][]byte
		_ = b.ForEach(func(k, v []byte) error {
			ks, vs = append(ks, append([]byte(nil), k...)), append(vs, append([]byte(nil), v[:len(v)-sealSize]...))
			return nil
		})
		for i := range ks {
			if err := b.Put(ks[i], vs[i]); err != nil {
				return err
			}
		}
	}
	return tx.Bucket(bucketMeta).Put(keyFormat, u64(2))
}

// readStorageState is what openStorage reads from raft.db of dir,
// encoded for comparison.
func readStorageState(t *testing.T, dir string) []byte {
	t.Helper()
	s, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	members, err := s.db.members()
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := proto.Marshal(s.confState)
	hs, _ := proto.Marshal(s.hardState)
	out := append(append(cs, '|'), hs...)
	out = binary.BigEndian.AppendUint64(out, s.compIndex)
	out = binary.BigEndian.AppendUint64(out, s.db.memberID())
	for id, ctx := range members {
		out = binary.BigEndian.AppendUint64(out, id)
		out = append(out, ctx...)
	}
	return out
}

// TestSealFormat2Lenient: the keys a sealed file must hold are not
// required of an older file sealed at open (an earlier release may not
// have written them together); from then on they are.
func TestSealFormat2Lenient(t *testing.T) {
	dir := sealedLog(t)
	updateDB(t, dir, func(tx *bolt.Tx) error {
		if err := unseal(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Delete(keyConfState)
	})
	s, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		t.Fatalf("a format 2 file without a configuration: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkRefused(t, dir, DamageMissing)
}
