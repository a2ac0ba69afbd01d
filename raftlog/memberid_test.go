package raftlog

import (
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestMemberIDRecordedAtStart: the first Start records the member's id,
// Inspect reads it, and a Start with another id is refused naming both,
// writing nothing; a log written before ids were recorded takes the id it
// is started with.
func TestMemberIDRecordedAtStart(t *testing.T) {
	dir := t.TempDir()
	n, err := Start(Config{ID: 0x5eed, Join: true, Dir: dir, Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	n.Stop()
	if dd, err := Inspect(dir); err != nil || dd.MemberID != 0x5eed {
		t.Fatalf("Inspect after the first start: %+v %v", dd, err)
	}
	_, err = Start(Config{ID: 0xbad, Join: true, Dir: dir, Applier: &recorder{}, TickInterval: testTick})
	if !errors.Is(err, ErrMemberIDMismatch) || !strings.Contains(err.Error(), "5eed") || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("Start with another member id: %v, want ErrMemberIDMismatch naming both", err)
	}
	if dd, _ := Inspect(dir); dd.MemberID != 0x5eed {
		t.Fatalf("the refused start changed the recorded id to %x", dd.MemberID)
	}

	// A log of an earlier release: no meta/member.
	old := t.TempDir()
	n = startSingle(t, old, &recorder{}, 0)
	waitReady(t, n)
	n.Stop()
	db, err := bolt.Open(old+"/"+storageFile, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyMember) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if dd, _ := Inspect(old); dd.MemberID != 0 {
		t.Fatalf("member id %x after deleting it", dd.MemberID)
	}
	n = startSingle(t, old, &recorder{}, 0)
	n.Stop()
	if dd, _ := Inspect(old); dd.MemberID != 1 {
		t.Fatalf("a log without a member id, started as 1, records %x", dd.MemberID)
	}
}
