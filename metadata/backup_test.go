package metadata

import (
	"strings"
	"testing"
)

// TestRestoreBackup: a store restored from a backup holds its schema at its
// epoch and log index 0, keeps no history before it, records the backup's
// id, and goes on from the next epoch; a dir is restored once.
func TestRestoreBackup(t *testing.T) {
	sm := openSM(t, t.TempDir())
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL}, Command{Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	backup := EncodeBackup(sm.Current())
	want := sm.Current()
	sm.Close()

	dir := t.TempDir()
	if id, err := RestoredFrom(dir); id != 0 || err != nil {
		t.Fatalf("RestoredFrom of an empty dir: %d, %v", id, err)
	}
	m, err := RestoreBackup(dir, backup)
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
	if restored.OldestEpoch() != want.Epoch+1 {
		t.Errorf("oldest epoch of history %d, want %d: none before the backup", restored.OldestEpoch(), want.Epoch+1)
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
