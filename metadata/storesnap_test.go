package metadata

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

// capturedContents is what a snapshot Capture took holds, as the contents
// of a record stream: it is restored into a state machine of its own.
func capturedContents(t testing.TB, data []byte) *snapshot.Contents {
	t.Helper()
	s, err := snapshot.DecodeStore(data)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	if err := sm.Restore(s.Index, data); err != nil {
		t.Fatal(err)
	}
	c := snapshotContents(sm.Current(), s.Index)
	return &c
}

// recordStream is the snapshot of m at index in the format members wrote
// before store snapshots, which Restore still takes.
func recordStream(m *ClusterMetadata, index uint64) []byte {
	c := snapshotContents(m, index)
	return snapshot.Encode(nil, &c)
}

// fullSM is richSM with everything else a snapshot carries: a function,
// a materialized view, guardrails, a keyspace's override, the history
// name, and more keyspaces and tables.
func fullSM(t *testing.T, cfg Config) (*StateMachine, *applier) {
	t.Helper()
	sm, a, _ := richSM(t, cfg)
	r := a.apply(setGuardrails(t, "user_defined_functions_enabled", "true", "materialized_views_enabled", "true", "tables_warn_threshold", "500"),
		setKeyspaceGuardrails(t, "other", "columns_per_table_fail_threshold", "30"),
		nameCmd(0xc1, 0xbeef),
		Command{RequestID: "more", Text: `CREATE FUNCTION shop.f (a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;';
			CREATE MATERIALIZED VIEW shop.by_n AS SELECT * FROM shop.users WHERE n IS NOT NULL AND id IS NOT NULL PRIMARY KEY (n, id);
			CREATE KEYSPACE third WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
			CREATE TYPE third.point (x int, y int)`})
	for i, res := range r {
		if res.Err != nil {
			t.Fatalf("setup command %d: %v", i, res.Err)
		}
	}
	for i := range 300 {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE third.t%03d (id int PRIMARY KEY, p frozen<point>)", i)})
	}
	return sm, a
}

// sameSettings compares what a snapshot carries beside the schema and
// the requests (sameMetadata).
func sameSettings(t *testing.T, want, got *ClusterMetadata) {
	t.Helper()
	if got.Guardrails != want.Guardrails || got.GuardrailsSet != want.GuardrailsSet || !got.KeyspaceGuardrails.Equal(want.KeyspaceGuardrails) || got.History != want.History {
		t.Fatalf("guardrails %v/%v, overrides %v, history name %+v; want %v/%v, %v, %+v", got.GuardrailsSet, got.Guardrails.Values(), got.KeyspaceGuardrails.All(), got.History,
			want.GuardrailsSet, want.Guardrails.Values(), want.KeyspaceGuardrails.All(), want.History)
	}
}

// TestStoreSnapshotRestoresWhatTheRecordStreamRestores: a store snapshot
// and a record stream of the same state restore the same metadata, and
// the same store, key for key (the history and its gap included: the
// receivers applied nothing before).
func TestStoreSnapshotRestoresWhatTheRecordStreamRestores(t *testing.T) {
	src, a := fullSM(t, Config{FlushWindow: time.Hour})
	defer src.Close()
	want := src.Current()
	if want.Schema.KeyspaceCount() != 3 || want.Schema.ViewCount() != 1 || want.Requests.Len() < 3 || !want.GuardrailsSet || want.History.Nonce == 0 {
		t.Fatalf("test setup: %d keyspaces, %d views, %d requests", want.Schema.KeyspaceCount(), want.Schema.ViewCount(), want.Requests.Len())
	}
	store, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	var dumps []map[string]string
	for _, data := range [][]byte{store, recordStream(want, a.index)} {
		dst := openSM(t, t.TempDir())
		if err := dst.Restore(a.index, data); err != nil {
			t.Fatal(err)
		}
		sameMetadata(t, want, dst.Current())
		sameSettings(t, want, dst.Current())
		dumps = append(dumps, storeDump(t, dst))
		dst.Close()
	}
	if d := cmp.Diff(dumps[1], dumps[0]); d != "" {
		t.Fatalf("store restored from a store snapshot (-record stream +store snapshot):\n%s", d)
	}
}

// TestSnapshotWork: a store snapshot stands for its file in the snapshot
// schedule, a record stream for its length.
func TestSnapshotWork(t *testing.T) {
	src, a := fullSM(t, Config{})
	defer src.Close()
	data, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	image, err := storeImage(src.Current(), a.index, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := SnapshotWork(data); got != len(image) || got <= len(data) {
		t.Fatalf("SnapshotWork of a store snapshot of %d bytes: %d, want its file's %d", len(data), got, len(image))
	}
	old := recordStream(src.Current(), a.index)
	if got := SnapshotWork(old); got != len(old) {
		t.Fatalf("SnapshotWork of a record stream: %d, want %d", got, len(old))
	}
}

// TestStoreSnapshotKeepsTheHistoryAsBefore: on a member with history of
// its own, a store snapshot keeps and drops the records, and leaves the
// gap, that a record stream of the same state does.
func TestStoreSnapshotKeepsTheHistoryAsBefore(t *testing.T) {
	src, a := fullSM(t, Config{})
	defer src.Close()
	store, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		history          map[string]string
		gapFrom, gapTo   uint64
		oldest, recorded uint64
	}
	var got []outcome
	for _, data := range [][]byte{store, recordStream(src.Current(), a.index)} {
		// A member that applied the first epochs (some flushed, some
		// pending) and others the snapshot does not have.
		dst, _ := openWith(t, Config{Dir: t.TempDir(), FlushWindow: time.Hour})
		b := &applier{t: t, sm: dst}
		b.apply(Command{RequestID: "setup", Text: richDDL})
		if err := dst.flusher.flush(); err != nil {
			t.Fatal(err)
		}
		b.apply(Command{RequestID: "ok", Keyspace: "shop", Text: "CREATE TABLE orders (id int PRIMARY KEY, v text)"},
			Command{Text: "CREATE TABLE shop.mine (id int PRIMARY KEY)"}, Command{Text: "CREATE TABLE shop.mine2 (id int PRIMARY KEY)"})
		if err := dst.Restore(a.index, data); err != nil {
			t.Fatal(err)
		}
		o := outcome{history: storeDump(t, dst, "history"), oldest: dst.OldestEpoch()}
		o.gapFrom, o.gapTo = dst.HistoryGap()
		recs, err := dst.History(0, o.gapFrom, 0)
		if err != nil {
			t.Fatal(err)
		}
		o.recorded = uint64(len(recs))
		got = append(got, o)
		dst.Close()
	}
	if got[0].gapFrom == 0 || got[0].recorded != got[0].gapFrom || len(got[0].history) == 0 {
		t.Fatalf("test setup: no history kept: %+v", got[0])
	}
	if d := cmp.Diff(got[1], got[0], cmp.AllowUnexported(outcome{})); d != "" {
		t.Fatalf("history after a store snapshot (-record stream +store snapshot):\n%s", d)
	}
}

// editImage returns the store file image changed by edit, in a bbolt
// transaction of its own.
func editImage(t *testing.T, image []byte, edit func(tx *bolt.Tx) error) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edit.db")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out bytes.Buffer
	err = db.Update(edit)
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error { _, err := tx.WriteTo(&out); return err })
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestDamagedStoreSnapshotChangesNothing: a store snapshot that is
// damaged, truncated, over the limit, for another index, or whose file
// does not hold what it says, is refused; the store's file, the published
// metadata and the data dir stay as they were, and the good snapshot
// restores afterwards.
func TestDamagedStoreSnapshotChangesNothing(t *testing.T) {
	src, a := fullSM(t, Config{})
	good, err := src.Capture(a.index)()
	m := src.Current()
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	image, err := storeImage(m, a.index, 0)
	if err != nil {
		t.Fatal(err)
	}
	framed := func(img []byte) []byte { return snapshot.EncodeStore(nil, a.index, m.Epoch, img) }
	resummed := func(s storeSummary) []byte {
		return framed(editImage(t, image, func(tx *bolt.Tx) error {
			var ar arena
			return putSummary(sealed(tx, bucketMeta), &ar, s)
		}))
	}
	sum := storeSummary{index: a.index, epoch: m.Epoch, digest: m.Schema.Digest(), known: true}
	badDigest, otherIndex := sum, sum
	badDigest.digest[0] ^= 1
	otherIndex.index++
	flipped := func(at int) []byte { b := bytes.Clone(good); b[at] ^= 0x04; return b }
	pageDamaged := bytes.Clone(image)
	binary.LittleEndian.PutUint64(pageDamaged[2*os.Getpagesize():], 12345) // page 2 says it is another page

	tests := []struct {
		name  string
		index uint64
		data  []byte
		is    error
	}{
		{"flipped byte in the header", a.index, flipped(7), snapshot.ErrChecksum},
		{"flipped byte in the middle", a.index, flipped(len(good) / 2), snapshot.ErrChecksum},
		{"flipped byte in the checksum", a.index, flipped(len(good) - 1), snapshot.ErrChecksum},
		{"truncated", a.index, good[:len(good)-10], snapshot.ErrCorrupt},
		{"truncated to the header", a.index, good[:12], snapshot.ErrCorrupt},
		{"another index", a.index + 1, good, ErrSnapshotIndex},
		{"over the limit", a.index, good, snapshot.ErrTooLarge},
		{"the file at another epoch", a.index, snapshot.EncodeStore(nil, a.index, m.Epoch+1, image), ErrSnapshotMismatch},
		{"the file at another index", a.index, resummed(otherIndex), ErrSnapshotMismatch},
		{"the file's digest off", a.index, resummed(badDigest), ErrDamaged},
		{"a page damaged", a.index, framed(pageDamaged), ErrDamaged},
		{"a table's checksum off", a.index, framed(editImage(t, image, func(tx *bolt.Tx) error {
			b := tx.Bucket(familyBuckets[familyTables]).Bucket([]byte("shop"))
			v := bytes.Clone(b.Get([]byte("users")))
			v[len(v)/2] ^= 1
			return b.Put([]byte("users"), v)
		})), ErrDamaged},
		{"a table resealed as another", a.index, framed(editImage(t, image, func(tx *bolt.Tx) error {
			b := tx.Bucket(familyBuckets[familyTables]).Bucket([]byte("third"))
			v, err := sealed(tx, familyBuckets[familyTables], []byte("third")).get([]byte("t001"))
			if err != nil {
				return err
			}
			t2, err := schema.DecodeTable(v)
			if err != nil {
				return err
			}
			t2.Extra = &schema.TableExtra{Options: map[string]string{"comment": "'changed'"}}
			var ar arena
			return inVault(b, familyBuckets[familyTables], []byte("third")).put(&ar, []byte("t001"), func(b []byte) []byte { return schema.AppendTable(b, t2) })
		})), ErrDamaged},
		{"no format", a.index, framed(editImage(t, image, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyFormat) })), ErrDamaged},
		// 33 MiB of zeros compress to well under the 1 MiB limit.
		{"a file of 33 times the limit", a.index, framed(make([]byte, 33<<20)), snapshot.ErrTooLarge},
	}
	dir := t.TempDir()
	sm, _, _ := richSM(t, Config{Dir: dir, MaxSnapshotBytes: 1 << 20})
	defer sm.Close()
	if err := sm.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	storeBytes := func() []byte {
		b, err := os.ReadFile(filepath.Join(dir, storeFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before, published := storeBytes(), sm.Current()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "over the limit" {
				sm.encoder.guard = snapshot.NewGuard(len(good) - 1)
				defer func() { sm.encoder.guard = snapshot.NewGuard(1 << 20) }()
			}
			err := sm.Restore(tt.index, tt.data)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Restore: %v, want %v", err, tt.is)
			}
			if sm.Current() != published {
				t.Fatal("a refused snapshot published new metadata")
			}
			if !bytes.Equal(storeBytes(), before) {
				t.Fatal("a refused snapshot changed the store's file")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Fatalf("files left in the data dir: %v", entries)
			}
		})
	}
	if err := sm.Restore(a.index, good); err != nil {
		t.Fatal(err)
	}
	sameMetadata(t, m, sm.Current())
	sameSettings(t, m, sm.Current())
}

// TestStoreSnapshotDoesNotWaitForAScrub: a scrub reading the store at its
// pace holds a read transaction on the store's file for as long as it
// takes; a store snapshot is installed meanwhile (the old file is closed
// once the scrub's transaction ends), and the scrub ends on its own file.
func TestStoreSnapshotDoesNotWaitForAScrub(t *testing.T) {
	src, a := fullSM(t, Config{})
	data, err := src.Capture(a.index)()
	want := src.Current()
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	sm, _ := fullSM(t, Config{})
	defer sm.Close()
	if err := sm.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	// One byte a second: the scrub pauses, for good, after its first
	// chunk; its clock says when it gets there.
	paused := make(chan struct{})
	var calls atomic.Int32
	s := &Scrubber{sm: sm, rate: 1, now: func() time.Time {
		if calls.Add(1) == 2 {
			close(paused)
		}
		return time.Now()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	scrubbed := make(chan error, 1)
	go func() {
		_, err := s.Scrub(ctx)
		scrubbed <- err
	}()
	<-paused
	restored := make(chan error, 1)
	go func() { restored <- sm.Restore(a.index, data) }()
	select {
	case err := <-restored:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the restore waits for the scrub")
	}
	sameMetadata(t, want, sm.Current())
	cancel()
	if err := <-scrubbed; !errors.Is(err, context.Canceled) {
		t.Fatalf("scrub: %v", err)
	}
}

// TestOpenRemovesAnUnfinishedRestore: the file of a store snapshot that a
// crash left beside the store is removed when the store opens, and the
// store is the one that was in place.
func TestOpenRemovesAnUnfinishedRestore(t *testing.T) {
	dir := t.TempDir()
	sm, _, _ := richSM(t, Config{Dir: dir})
	want := sm.Current()
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, storeFile+receivedSuffix)
	if err := os.WriteFile(left, []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	defer re.Close()
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unfinished restore is still there: %v", err)
	}
	sameMetadata(t, want, re.Current())
}
