package raftlog

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// walSegments returns the paths of the wal segments in dir, oldest first.
func walSegments(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(dir, walDirName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if _, ok := parseWALFileName(de.Name()); ok {
			out = append(out, filepath.Join(dir, walDirName, de.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// walRecordOffsets returns the offsets of the records in the segment at
// path and the end of the last one.
func walRecordOffsets(t *testing.T, path string) (offs []int, end int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for end < len(b) && !allZero(b[end:]) {
		_, n, _, err := parseWALRecord(b[end:])
		if err != nil {
			t.Fatalf("%s at %d: %v", path, end, err)
		}
		offs = append(offs, end)
		end += n
	}
	return offs, end
}

func smallSegments(t *testing.T, segment, prealloc int64) {
	oldSeg, oldPre := walSegmentBytes, walPreallocBytes
	walSegmentBytes, walPreallocBytes = segment, prealloc
	t.Cleanup(func() { walSegmentBytes, walPreallocBytes = oldSeg, oldPre })
}

// fillLog saves entries 1..5 and 6..8 and closes the storage.
func fillLog(t *testing.T, dir string) {
	t.Helper()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 3), ents(1, 5, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.save(hardState(2, 2, 5), ents(6, 8, 2, "b"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWALTornTail(t *testing.T) {
	damage := map[string]func(t *testing.T, path string, last, end int){
		// The last write reached the disk only in part.
		"cut short": func(t *testing.T, path string, last, end int) {
			if err := os.Truncate(path, int64(end-3)); err != nil {
				t.Fatal(err)
			}
		},
		// The last record's pages were allocated but not all written.
		"zeroed": func(t *testing.T, path string, last, end int) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(make([]byte, end-last-20), int64(last+20)); err != nil {
				t.Fatal(err)
			}
		},
		// Garbage in the last record, preallocated zeros after it.
		"bad checksum": func(t *testing.T, path string, last, end int) {
			flipByte(t, path, int64(end-1))
		},
	}
	for name, damage := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fillLog(t, dir)
			segs := walSegments(t, dir)
			if len(segs) != 1 {
				t.Fatalf("segments %v, want one", segs)
			}
			offs, end := walRecordOffsets(t, segs[0])
			// The segment's header record, then one record per save.
			if len(offs) != 3 {
				t.Fatalf("%d records, want 3", len(offs))
			}
			damage(t, segs[0], offs[2], end)

			s := openTestStorage(t, dir)
			want := storageView{
				HardState: hardState(1, 1, 3),
				ConfState: raftpb.EnsureConfState(nil),
				First:     1,
				Last:      5,
				Entries:   ents(1, 5, 1, "a"),
				Terms:     []uint64{0, 1, 1, 1, 1, 1},
			}
			if diff := cmp.Diff(want, viewOf(t, s), protocmp.Transform()); diff != "" {
				t.Fatalf("after a torn write (-want +got):\n%s", diff)
			}
			// The log goes on where the torn record was.
			if err := s.save(hardState(3, 3, 5), ents(6, 7, 3, "c"), nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if offs2, _ := walRecordOffsets(t, segs[0]); len(offs2) != 3 || offs2[2] != offs[2] {
				t.Errorf("records at %v after the next save, want %v", offs2, offs)
			}
			want.HardState = hardState(3, 3, 5)
			want.Last = 7
			want.Entries = append(want.Entries, ents(6, 7, 3, "c")...)
			want.Terms = append(want.Terms, 3, 3)
			if diff := cmp.Diff(want, viewOf(t, openTestStorage(t, dir)), protocmp.Transform()); diff != "" {
				t.Fatalf("after reopening (-want +got):\n%s", diff)
			}
		})
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestWALCorruptInTheMiddle(t *testing.T) {
	t.Run("last segment", func(t *testing.T) {
		dir := t.TempDir()
		fillLog(t, dir)
		segs := walSegments(t, dir)
		offs, _ := walRecordOffsets(t, segs[0])
		flipByte(t, segs[0], int64(offs[1]+20)) // the first save; the second follows
		if s, err := openStorage(dir, defaultLockTimeout, nil); err == nil {
			_ = s.Close()
			t.Fatal("openStorage succeeded on a log corrupt before its last record")
		} else if !strings.Contains(err.Error(), "corrupt") || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), segs[0]) {
			t.Errorf("err = %v, want one about corruption matching ErrDamaged, naming %s", err, segs[0])
		}
	})
	t.Run("older segment", func(t *testing.T) {
		smallSegments(t, 1, 64)
		dir := t.TempDir()
		fillLog(t, dir)
		segs := walSegments(t, dir)
		if len(segs) < 2 {
			t.Fatalf("segments %v, want several", segs)
		}
		_, end := walRecordOffsets(t, segs[0])
		flipByte(t, segs[0], int64(end-1)) // its last record: not the log's
		if s, err := openStorage(dir, defaultLockTimeout, nil); err == nil {
			_ = s.Close()
			t.Fatal("openStorage succeeded on a corrupt older segment")
		} else if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), segs[0]) {
			t.Errorf("err = %v, want one matching ErrDamaged, naming %s", err, segs[0])
		}
	})
}

// TestWALSegments runs the comparison with MemoryStorage on tiny segments,
// so that appends rotate them and compactions delete them.
func TestWALSegments(t *testing.T) {
	smallSegments(t, 2048, 512)
	TestStorageMatchesMemoryStorage(t)

	dir := t.TempDir()
	s := openTestStorage(t, dir)
	for i := uint64(1); i <= 100; i += 10 {
		if err := s.save(hardState(1, 1, i), ents(i, i+9, 1, strings.Repeat("x", 100)), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := walSegments(t, dir)
	if err := s.Compact(90); err != nil {
		t.Fatal(err)
	}
	after := walSegments(t, dir)
	if len(before) < 5 || len(after) >= len(before) || after[len(after)-1] != before[len(before)-1] {
		t.Errorf("segments %d before compacting, %d after, want many then fewer (%v)", len(before), len(after), after)
	}
	// The hard state survives the segments that held it.
	s.setHardStateLazy(hardState(1, 1, 100))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStorage(t, dir)
	want := storageView{
		HardState: hardState(1, 1, 100),
		ConfState: raftpb.EnsureConfState(nil),
		First:     91,
		Last:      100,
		Entries:   ents(91, 100, 1, strings.Repeat("x", 100)),
		Terms:     slices.Repeat([]uint64{1}, 11),
	}
	if diff := cmp.Diff(want, viewOf(t, s), protocmp.Transform()); diff != "" {
		t.Errorf("after compacting and reopening (-want +got):\n%s", diff)
	}
}

// TestWALSnapshotCrash reopens a log whose snapshot was recorded in
// raft.db but whose following record never made it to the wal.
func TestWALSnapshotCrash(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 3), ents(1, 8, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{
		Data:     []byte("state"),
		Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(5)), Term: new(uint64(1)), ConfState: raftpb.EnsureConfState(nil)},
	}
	if err := s.save(hardState(2, 2, 0), ents(6, 6, 2, "b"), snap, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	segs := walSegments(t, dir)
	if len(segs) != 1 {
		t.Fatalf("segments %v after a snapshot, want one", segs)
	}
	if err := os.Truncate(segs[0], 0); err != nil { // the crash
		t.Fatal(err)
	}
	want := storageView{
		HardState: hardState(2, 2, 5), // from raft.db, the commit raised to the snapshot
		ConfState: raftpb.EnsureConfState(nil),
		First:     6,
		Last:      5,
		Terms:     []uint64{1},
	}
	if diff := cmp.Diff(want, viewOf(t, openTestStorage(t, dir)), protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStorageMigratesFormat1 opens a raft.db written by format 1, with the
// entries in bbolt.
func TestStorageMigratesFormat1(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, storageFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := ents(3, 9, 2, "old")
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket(bucketMeta)
		b, _ := tx.CreateBucket(bucketEntries)
		if _, err := tx.CreateBucket(bucketMembers); err != nil {
			return err
		}
		hs, _ := proto.Marshal(hardState(2, 1, 7))
		_ = meta.Put(keyHardState, hs)
		_ = meta.Put(keyFormat, u64(1))
		_ = meta.Put(keyCompacted, u128(2, 1))
		for _, e := range all {
			v, _ := proto.Marshal(e)
			if err := b.Put(u64(e.GetIndex()), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := storageView{
		HardState: hardState(2, 1, 7),
		ConfState: raftpb.EnsureConfState(nil),
		First:     3,
		Last:      9,
		Entries:   all,
		Terms:     []uint64{1, 2, 2, 2, 2, 2, 2, 2},
	}
	for range 2 {
		s := openTestStorage(t, dir)
		if diff := cmp.Diff(want, viewOf(t, s), protocmp.Transform()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		var format uint64
		var left int
		_ = s.db.bolt.View(func(tx *bolt.Tx) error {
			format = binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keyFormat))
			left = tx.Bucket(bucketEntries).Stats().KeyN
			return nil
		})
		if format != storageFormat || left != 0 {
			t.Errorf("format %d with %d entries in raft.db, want %d and none", format, left, storageFormat)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWALRotationCrash cuts the log off between the first record of a new
// segment and the save that started it: the hard state of that save must
// not survive without its entries.
func TestWALRotationCrash(t *testing.T) {
	smallSegments(t, 1, 64)
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 0), ents(1, 3, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.save(hardState(2, 1, 5), ents(4, 5, 2, "b"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	segs := walSegments(t, dir)
	last := segs[len(segs)-1]
	offs, _ := walRecordOffsets(t, last)
	if len(offs) != 2 {
		t.Fatalf("%d records in the last segment, want 2", len(offs))
	}
	if err := os.Truncate(last, int64(offs[1])); err != nil {
		t.Fatal(err)
	}
	want := storageView{
		HardState: hardState(1, 1, 0),
		ConfState: raftpb.EnsureConfState(nil),
		First:     1,
		Last:      3,
		Entries:   ents(1, 3, 1, "a"),
		Terms:     []uint64{0, 1, 1, 1},
	}
	if diff := cmp.Diff(want, viewOf(t, openTestStorage(t, dir)), protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
