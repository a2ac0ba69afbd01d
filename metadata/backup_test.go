package metadata

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestRestoreBackup: a store restored from a backup holds its schema at its
// epoch and log index 0 and its history, records the backup's id, and goes
// on from the next epoch; a dir is restored once.
func TestRestoreBackup(t *testing.T) {
	src := t.TempDir()
	sm := openSM(t, src)
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL}, Command{Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	want := sm.Current()
	backup, err := sm.Backup(want)
	if err != nil {
		t.Fatal(err)
	}
	sm.Close()
	// Reopened, the history is read from the store, not memory: the same
	// backup.
	sm = openSM(t, src)
	again, err := sm.Backup(sm.Current())
	sm.Close()
	if err != nil || !bytes.Equal(again, backup) {
		t.Fatalf("the backup from the store differs from the one from memory (%d and %d bytes): %v", len(again), len(backup), err)
	}

	dir := t.TempDir()
	var m *ClusterMetadata
	if id, err := RestoredFrom(dir); id != 0 || err != nil {
		t.Fatalf("RestoredFrom of an empty dir: %d, %v", id, err)
	}
	m, err = RestoreBackup(dir, backup)
	if err != nil {
		t.Fatal(err)
	}
	if m.Epoch != want.Epoch || m.Index != 0 || m.Schema.Digest() != want.Schema.Digest() {
		t.Fatalf("restored epoch %d index %d, want epoch %d index 0 and the same schema", m.Epoch, m.Index, want.Epoch)
	}
	if id, err := RestoredFrom(dir); id != BackupID(backup) || id == 0 || err != nil {
		t.Fatalf("RestoredFrom: %d, %v; want %d", id, err, BackupID(backup))
	}
	if _, err := RestoreBackup(dir, backup); err == nil || !strings.Contains(err.Error(), "new data dir") {
		t.Fatalf("a second restore into the dir: %v", err)
	}

	restored := openSM(t, dir)
	defer restored.Close()
	if got := restored.Current(); got.Epoch != want.Epoch || got.Schema.Digest() != want.Schema.Digest() {
		t.Fatalf("opened at epoch %d, want %d and the same schema", got.Epoch, want.Epoch)
	}
	if restored.OldestEpoch() != 1 {
		t.Errorf("oldest epoch of history %d, want 1: the backup's history", restored.OldestEpoch())
	}
	if recs, err := restored.History(0, want.Epoch, 0); err != nil || len(recs) != int(want.Epoch) || recs[1].Events[0].Statement != "CREATE TABLE shop.t (id int PRIMARY KEY)" {
		t.Errorf("history restored: %d records, %v; want %d", len(recs), err, want.Epoch)
	}
	b := &applier{t: t, sm: restored}
	b.apply(Command{Text: "CREATE TABLE shop.u (id int PRIMARY KEY)"})
	if got := restored.Current().Epoch; got != want.Epoch+1 {
		t.Errorf("the first DDL after the restore took epoch %d, want %d", got, want.Epoch+1)
	}
	if recs, err := restored.History(want.Epoch, want.Epoch+1, 0); err != nil || len(recs) != 1 {
		t.Errorf("history after the restore: %d records, %v", len(recs), err)
	}

	if _, err := RestoreBackup(t.TempDir(), backup[:len(backup)-1]); err == nil {
		t.Error("a truncated backup was restored")
	}
}

// TestBackupHistoryRefusesBadSections: a history section that does not
// decode, skips an epoch, or ends before the backup's epoch is an error
// naming what is wrong.
func TestBackupHistoryRefusesBadSections(t *testing.T) {
	rec := func(epoch uint64) []byte {
		return AppendRecord(nil, &Record{Epoch: epoch, Index: epoch, Events: []Event{{Kind: "CREATE KEYSPACE", Keyspace: "k", Statement: "x"}}})
	}
	section := func(recs ...[]byte) []byte {
		b := binary.AppendUvarint(nil, uint64(len(recs)))
		for _, r := range recs {
			b = binary.AppendUvarint(b, uint64(len(r)))
			b = append(b, r...)
		}
		return b
	}
	if n, first, err := BackupHistory(section(rec(1), rec(2)), 2); err != nil || n != 2 || first != 1 {
		t.Fatalf("a good section: %d records from epoch %d, %v", n, first, err)
	}
	for name, c := range map[string]struct {
		data  []byte
		epoch uint64
		want  string
	}{
		"skips an epoch": {section(rec(1), rec(3)), 3, "out of order"},
		"past the epoch": {section(rec(1), rec(2)), 1, "out of order"},
		"ends early":     {section(rec(1)), 2, "ends at epoch 1"},
		"truncated":      {section(rec(1), rec(2))[:10], 2, "truncated"},
		"trailing bytes": {append(section(rec(1)), 0), 1, "after the last record"},
		"empty":          {nil, 1, "bad record count"},
	} {
		if _, _, err := BackupHistory(c.data, c.epoch); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
