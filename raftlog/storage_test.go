package raftlog

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

func ent(index, term uint64, data string) *raftpb.Entry {
	e := &raftpb.Entry{Index: new(index), Term: new(term), Type: raftpb.EntryNormal.Enum()}
	if data != "" {
		e.Data = []byte(data)
	}
	return e
}

func ents(first, last, term uint64, prefix string) []*raftpb.Entry {
	var out []*raftpb.Entry
	for i := first; i <= last; i++ {
		out = append(out, ent(i, term, fmt.Sprintf("%s%d", prefix, i)))
	}
	return out
}

func hardState(term, vote, commit uint64) *raftpb.HardState {
	return &raftpb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

// applySnapshot replaces the log with snap, as the Ready of a snapshot
// received from the leader does (without member contexts).
func applySnapshot(s *Storage, snap *raftpb.Snapshot) error {
	if raft.IsEmptySnap(snap) {
		return errors.New("raftlog: apply snapshot: snapshot is empty")
	}
	return s.save(nil, nil, snap, nil)
}

func openTestStorage(t *testing.T, dir string) *Storage {
	t.Helper()
	s, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		t.Fatalf("openStorage(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// storageView is everything raft can observe through raft.Storage.
type storageView struct {
	HardState   *raftpb.HardState
	ConfState   *raftpb.ConfState
	First, Last uint64
	Entries     []*raftpb.Entry
	Terms       []uint64 // Term(First-1) .. Term(Last)
}

func viewOf(t *testing.T, s raft.Storage) storageView {
	t.Helper()
	var v storageView
	var err error
	if v.HardState, v.ConfState, err = s.InitialState(); err != nil {
		t.Fatalf("InitialState: %v", err)
	}
	if raft.IsEmptyHardState(v.HardState) {
		v.HardState = nil
	}
	v.ConfState = raftpb.EnsureConfState(v.ConfState)
	if v.First, err = s.FirstIndex(); err != nil {
		t.Fatalf("FirstIndex: %v", err)
	}
	if v.Last, err = s.LastIndex(); err != nil {
		t.Fatalf("LastIndex: %v", err)
	}
	if v.Last >= v.First {
		if v.Entries, err = s.Entries(v.First, v.Last+1, ^uint64(0)); err != nil {
			t.Fatalf("Entries(%d, %d): %v", v.First, v.Last+1, err)
		}
	}
	for i := v.First - 1; i <= v.Last; i++ {
		term, err := s.Term(i)
		if err != nil {
			t.Fatalf("Term(%d): %v", i, err)
		}
		v.Terms = append(v.Terms, term)
	}
	return v
}

func TestStorageEmpty(t *testing.T) {
	s := openTestStorage(t, t.TempDir())
	got := viewOf(t, s)
	want := storageView{ConfState: raftpb.EnsureConfState(nil), First: 1, Last: 0, Terms: []uint64{0}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("new storage (-want +got):\n%s", diff)
	}
	if _, err := s.Entries(1, 1, 100); !errors.Is(err, raft.ErrUnavailable) {
		t.Errorf("Entries(1, 1) on empty log: err = %v, want ErrUnavailable", err)
	}
	if _, err := s.Term(1); err != raft.ErrUnavailable {
		t.Errorf("Term(1) on empty log: err = %v, want ErrUnavailable (bare)", err)
	}
	snap, err := s.Snapshot()
	if err != nil || !raft.IsEmptySnap(snap) {
		t.Errorf("Snapshot() = %v, %v; want empty, nil", snap, err)
	}
}

func TestStorageRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)

	// Term 1: entries 1..5. Then a new leader at term 2 overwrites 3..5
	// with 3..4: entry 5 must disappear.
	if err := s.save(hardState(1, 1, 0), ents(1, 5, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.save(hardState(2, 2, 2), ents(3, 4, 2, "b"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.saveConfChange(&raftpb.ConfState{Voters: []uint64{1, 2, 3}}, memberChange{}); err != nil {
		t.Fatal(err)
	}
	// A commit-only update goes through the lazy path, written by Close.
	s.setHardStateLazy(hardState(2, 2, 4))

	wantEnts := append(ents(1, 2, 1, "a"), ents(3, 4, 2, "b")...)
	want := storageView{
		HardState: hardState(2, 2, 4),
		ConfState: raftpb.EnsureConfState(&raftpb.ConfState{Voters: []uint64{1, 2, 3}}),
		First:     1,
		Last:      4,
		Entries:   wantEnts,
		Terms:     []uint64{0, 1, 1, 2, 2},
	}
	if diff := cmp.Diff(want, viewOf(t, s), protocmp.Transform()); diff != "" {
		t.Errorf("before reopen (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestStorage(t, dir)
	if diff := cmp.Diff(want, viewOf(t, s2), protocmp.Transform()); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if _, err := s2.Term(5); err != raft.ErrUnavailable {
		t.Errorf("Term(5) after truncation: err = %v, want ErrUnavailable", err)
	}

	// Appending after the tail, and a hard-state-only save, persist too.
	if err := s2.save(hardState(3, 1, 4), ents(5, 6, 3, "c"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s2.save(hardState(3, 1, 6), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	want.HardState = hardState(3, 1, 6)
	want.Last = 6
	want.Entries = append(want.Entries, ents(5, 6, 3, "c")...)
	want.Terms = append(want.Terms, 3, 3)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	s3 := openTestStorage(t, dir)
	if diff := cmp.Diff(want, viewOf(t, s3), protocmp.Transform()); diff != "" {
		t.Errorf("after second reopen (-want +got):\n%s", diff)
	}
}

func TestStorageSaveGap(t *testing.T) {
	s := openTestStorage(t, t.TempDir())
	if err := s.save(nil, ents(1, 2, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.save(nil, ents(4, 4, 1, "a"), nil, nil); err == nil {
		t.Fatal("save with a gap after the last index succeeded")
	}
	if last, _ := s.LastIndex(); last != 2 {
		t.Errorf("LastIndex after failed save = %d, want 2", last)
	}
}

func TestStorageEntriesMaxSize(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	all := ents(1, 10, 1, "payload-of-some-length-")
	if err := s.save(hardState(1, 1, 10), all, nil, nil); err != nil {
		t.Fatal(err)
	}
	size := uint64(proto.Size(all[0])) // all entries have the same size here
	tests := []struct {
		name     string
		lo, hi   uint64
		maxSize  uint64
		wantLast uint64 // index of the last entry returned
	}{
		{"zero limit returns one", 1, 11, 0, 1},
		{"below one entry returns one", 3, 11, size - 1, 3},
		{"exactly one", 3, 11, size, 3},
		{"two and a half", 2, 11, size * 5 / 2, 3},
		{"exactly three", 2, 11, size * 3, 4},
		{"unlimited", 1, 11, ^uint64(0), 10},
		{"bounded by hi", 4, 7, ^uint64(0), 6},
	}
	check := func(t *testing.T, s *Storage) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.Entries(tt.lo, tt.hi, tt.maxSize)
				if err != nil {
					t.Fatal(err)
				}
				want := all[tt.lo-1 : tt.wantLast]
				if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
					t.Errorf("Entries(%d, %d, %d) (-want +got):\n%s", tt.lo, tt.hi, tt.maxSize, diff)
				}
			})
		}
	}
	t.Run("cached", func(t *testing.T) { check(t, s) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("from file", func(t *testing.T) { check(t, openTestStorage(t, dir)) })
}

func TestStorageCompactedAndUnavailable(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(2, 1, 8), append(ents(1, 4, 1, "a"), ents(5, 8, 2, "b")...), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(5); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, s *Storage) {
		if first, _ := s.FirstIndex(); first != 6 {
			t.Errorf("FirstIndex = %d, want 6", first)
		}
		if last, _ := s.LastIndex(); last != 8 {
			t.Errorf("LastIndex = %d, want 8", last)
		}
		// raft compares these errors with ==: they must be the bare values.
		for _, lo := range []uint64{1, 4, 5} {
			if _, err := s.Entries(lo, 8, ^uint64(0)); err != raft.ErrCompacted {
				t.Errorf("Entries(%d, 8): err = %v, want ErrCompacted", lo, err)
			}
		}
		if _, err := s.Entries(6, 10, ^uint64(0)); err != raft.ErrUnavailable {
			t.Errorf("Entries(6, 10): err = %v, want ErrUnavailable", err)
		}
		if _, err := s.Term(4); err != raft.ErrCompacted {
			t.Errorf("Term(4): err = %v, want ErrCompacted", err)
		}
		if term, err := s.Term(5); err != nil || term != 2 {
			t.Errorf("Term(5) = %d, %v; want 2, nil (kept for matching)", term, err)
		}
		if _, err := s.Term(9); err != raft.ErrUnavailable {
			t.Errorf("Term(9): err = %v, want ErrUnavailable", err)
		}
		got, err := s.Entries(6, 9, ^uint64(0))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ents(6, 8, 2, "b"), got, protocmp.Transform()); diff != "" {
			t.Errorf("Entries(6, 9) (-want +got):\n%s", diff)
		}
		if err := s.Compact(5); err != raft.ErrCompacted {
			t.Errorf("Compact(5) again: err = %v, want ErrCompacted", err)
		}
	}
	check(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(t, openTestStorage(t, dir))
}

func TestStorageApplySnapshot(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 3), ents(1, 3, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{
		Data: []byte("state"),
		Metadata: &raftpb.SnapshotMetadata{
			Index:     new(uint64(10)),
			Term:      new(uint64(3)),
			ConfState: raftpb.EnsureConfState(&raftpb.ConfState{Voters: []uint64{1, 2, 3}}),
		},
	}
	if err := applySnapshot(s, snap); err != nil {
		t.Fatal(err)
	}
	if err := s.save(hardState(3, 2, 11), ents(11, 12, 3, "c"), nil, nil); err != nil {
		t.Fatal(err)
	}
	want := storageView{
		HardState: hardState(3, 2, 11),
		ConfState: snap.GetMetadata().GetConfState(),
		First:     11,
		Last:      12,
		Entries:   ents(11, 12, 3, "c"),
		Terms:     []uint64{3, 3, 3},
	}
	if diff := cmp.Diff(want, viewOf(t, s), protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestStorage(t, dir)
	if diff := cmp.Diff(want, viewOf(t, s2), protocmp.Transform()); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	got, err := s2.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snap, got, protocmp.Transform()); diff != "" {
		t.Errorf("Snapshot() (-want +got):\n%s", diff)
	}
	if err := applySnapshot(s2, snap); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Errorf("applySnapshot of the same index: err = %v, want ErrSnapOutOfDate", err)
	}
}

// TestStorageMatchesMemoryStorage drives Storage and raft's MemoryStorage
// with the same random appends (including overwritten tails) and
// compactions, and compares what raft could observe, also after reopening.
func TestStorageMatchesMemoryStorage(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			dir := t.TempDir()
			s := openTestStorage(t, dir)
			ms := raft.NewMemoryStorage()
			var term, last, compacted uint64 = 1, 0, 0
			for step := range 300 {
				r := rng.IntN(20)
				if last > compacted+800 {
					r = 0 // keep the log short enough to compare in full each step
				}
				switch {
				case r == 0 && last > compacted+1:
					at := compacted + 1 + rng.Uint64N(last-compacted-1)
					if err := s.Compact(at); err != nil {
						t.Fatalf("step %d: Compact(%d): %v", step, at, err)
					}
					if err := ms.Compact(at); err != nil {
						t.Fatal(err)
					}
					compacted = at
				case r == 1:
					// Reopen: everything must come back from the file.
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = openTestStorage(t, dir)
				default:
					first := last + 1
					if r < 6 && last > compacted {
						// Overwrite a suffix, as a new leader would.
						first = compacted + 1 + rng.Uint64N(last-compacted)
						term++
					}
					n := 1 + rng.Uint64N(40)
					batch := make([]*raftpb.Entry, 0, n)
					for i := range n {
						data := make([]byte, rng.IntN(200))
						for j := range data {
							data[j] = byte(rng.Uint32())
						}
						batch = append(batch, &raftpb.Entry{Index: new(first + i), Term: new(term), Data: data})
					}
					hs := hardState(term, 1, compacted)
					if err := s.save(hs, batch, nil, nil); err != nil {
						t.Fatalf("step %d: save(%d..%d): %v", step, first, first+n-1, err)
					}
					if err := ms.Append(batch); err != nil {
						t.Fatal(err)
					}
					if err := ms.SetHardState(hs); err != nil {
						t.Fatal(err)
					}
					last = first + n - 1
				}
				got, want := viewOf(t, s), viewOf(t, ms)
				// protocmp is slow on thousands of entries: compare cheaply
				// first and diff only on a mismatch.
				if !viewsEqual(want, got) {
					diff := cmp.Diff(want, got, protocmp.Transform())
					t.Fatalf("step %d (-memory +bolt):\n%s", step, diff)
				}
				// A random bounded read must agree too.
				if last > compacted {
					lo := compacted + 1 + rng.Uint64N(last-compacted)
					hi := lo + 1 + rng.Uint64N(last-lo+1)
					maxSize := rng.Uint64N(2000)
					g, err1 := s.Entries(lo, hi, maxSize)
					w, err2 := ms.Entries(lo, hi, maxSize)
					if err1 != nil || err2 != nil {
						t.Fatalf("step %d: Entries(%d, %d, %d): %v / %v", step, lo, hi, maxSize, err1, err2)
					}
					if !entriesEqual(w, g) {
						diff := cmp.Diff(w, g, protocmp.Transform())
						t.Fatalf("step %d: Entries(%d, %d, %d) (-memory +bolt):\n%s", step, lo, hi, maxSize, diff)
					}
				}
			}
		})
	}
}

func TestStorageLocked(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	_ = s
	_, err := openStorage(dir, 50*time.Millisecond, nil)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: err = %v, want ErrLocked", err)
	}
}

func TestStorageClosed(t *testing.T) {
	s := openTestStorage(t, t.TempDir())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.save(hardState(1, 1, 0), nil, nil, nil); !errors.Is(err, ErrStopped) {
		t.Errorf("save after Close: err = %v, want ErrStopped", err)
	}
}

func TestStorageCachedEntriesAllocs(t *testing.T) {
	s := openTestStorage(t, t.TempDir())
	if err := s.save(hardState(1, 1, 0), ents(1, 10, 1, "x"), nil, nil); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.Entries(5, 11, ^uint64(0)); err != nil {
			t.Fatal(err)
		}
	})
	// The returned slice is the only allocation for cached entries.
	if allocs > 1 {
		t.Errorf("Entries from the cache: %v allocations, want at most 1", allocs)
	}
}

func viewsEqual(a, b storageView) bool {
	return proto.Equal(a.HardState, b.HardState) && proto.Equal(a.ConfState, b.ConfState) &&
		a.First == b.First && a.Last == b.Last && entriesEqual(a.Entries, b.Entries) &&
		slices.Equal(a.Terms, b.Terms)
}

func entriesEqual(a, b []*raftpb.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y *raftpb.Entry) bool { return proto.Equal(x, y) })
}

// TestStorageStoreSnapshot stores snapshots taken locally: the log stays,
// the newest two files are kept, and the newest snapshot comes back with
// its data after reopening. A snapshot received with member contexts
// replaces the log and the stored members.
func TestStorageStoreSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 30), ents(1, 30, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	cs := raftpb.EnsureConfState(&raftpb.ConfState{Voters: []uint64{1}})
	snapAt := func(index uint64) *raftpb.Snapshot {
		return &raftpb.Snapshot{
			Data:     fmt.Appendf(nil, "state@%d", index),
			Metadata: &raftpb.SnapshotMetadata{Index: new(index), Term: new(uint64(1)), ConfState: cs},
		}
	}
	for _, index := range []uint64{10, 20, 25} {
		// The data in two pieces, which the file holds one after the other.
		data := snapAt(index).GetData()
		if err := s.storeSnapshot(snapAt(index).GetMetadata(), data[:3], data[3:]); err != nil {
			t.Fatalf("storeSnapshot(%d): %v", index, err)
		}
	}
	if err := storeTestSnapshot(s, snapAt(25)); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Errorf("storeSnapshot of the same index: err = %v, want ErrSnapOutOfDate", err)
	}
	if err := storeTestSnapshot(s, snapAt(31)); !errors.Is(err, raft.ErrUnavailable) {
		t.Errorf("storeSnapshot beyond the log: err = %v, want ErrUnavailable", err)
	}
	check := func(s *Storage) {
		t.Helper()
		got, err := s.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(snapAt(25), got, protocmp.Transform()); diff != "" {
			t.Errorf("Snapshot() (-want +got):\n%s", diff)
		}
		if first, _ := s.FirstIndex(); first != 1 {
			t.Errorf("FirstIndex = %d, want 1: storing a snapshot does not compact", first)
		}
		files := snapFiles(t, dir)
		if want := []string{snapFileName(1, 20), snapFileName(1, 25)}; !slices.Equal(files, want) {
			t.Errorf("files %v, want %v", files, want)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStorage(t, dir)
	check(s)

	recv := snapAt(40)
	recv.Metadata.Term = new(uint64(2))
	if err := s.save(hardState(2, 0, 40), nil, recv, &snapMembers{contexts: map[uint64][]byte{5: []byte("five")}}); err != nil {
		t.Fatal(err)
	}
	if first, _ := s.FirstIndex(); first != 41 {
		t.Errorf("FirstIndex after a received snapshot = %d, want 41", first)
	}
	members, err := s.db.members()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[uint64][]byte{5: []byte("five")}, members); diff != "" {
		t.Errorf("members after a received snapshot (-want +got):\n%s", diff)
	}
	if want := []string{snapFileName(1, 25), snapFileName(2, 40)}; !slices.Equal(snapFiles(t, dir), want) {
		t.Errorf("files %v, want %v", snapFiles(t, dir), want)
	}
}

// storeTestSnapshot stores snap as the node's own snapshot, its data in one
// piece.
func storeTestSnapshot(s *Storage, snap *raftpb.Snapshot) error {
	return s.storeSnapshot(snap.GetMetadata(), snap.GetData())
}

// TestStorageSnapshotReadsFile: the stored snapshot's data is not kept in
// memory but read back from its file at each Snapshot, each call getting
// a copy of its own; a file that cannot be read back makes raft's Snapshot
// answer "temporarily unavailable" (raft panics on any other error) and
// readSnapshot name the file.
func TestStorageSnapshotReadsFile(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 30), ents(1, 30, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	cs := raftpb.EnsureConfState(&raftpb.ConfState{Voters: []uint64{1}})
	md := &raftpb.SnapshotMetadata{Index: new(uint64(10)), Term: new(uint64(1)), ConfState: cs}
	if err := s.storeSnapshot(md, []byte("state@10")); err != nil {
		t.Fatal(err)
	}
	if s.snaps.newest.GetIndex() != 10 {
		t.Fatalf("newest stored snapshot at %d, want 10", s.snaps.newest.GetIndex())
	}
	a, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if string(a.GetData()) != "state@10" || string(b.GetData()) != "state@10" || &a.GetData()[0] == &b.GetData()[0] {
		t.Fatalf("Snapshot data %q and %q, want \"state@10\" twice in two copies", a.GetData(), b.GetData())
	}
	path := filepath.Join(dir, snapDirName, snapFileName(1, 10))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 0xff
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(); err != raft.ErrSnapshotTemporarilyUnavailable {
		t.Errorf("Snapshot of a corrupt file: err = %v, want ErrSnapshotTemporarilyUnavailable", err)
	}
	if _, err := s.readSnapshot(); !errors.Is(err, ErrBadSnapshotFile) || !strings.Contains(err.Error(), path) {
		t.Errorf("readSnapshot of a corrupt file: err = %v, want ErrBadSnapshotFile naming %s", err, path)
	}
}

// TestStorageAwaitSnapshot: while a snapshot at or past a membership change
// is awaited, Snapshot says "temporarily unavailable" (raft asks again
// later) instead of handing out one a new member would ignore.
func TestStorageAwaitSnapshot(t *testing.T) {
	s := openTestStorage(t, t.TempDir())
	if err := s.save(hardState(1, 1, 30), ents(1, 30, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	cs := raftpb.EnsureConfState(&raftpb.ConfState{Voters: []uint64{1}})
	snapAt := func(index uint64) *raftpb.Snapshot {
		return &raftpb.Snapshot{Data: fmt.Appendf(nil, "state@%d", index),
			Metadata: &raftpb.SnapshotMetadata{Index: new(index), Term: new(uint64(1)), ConfState: cs}}
	}
	if err := storeTestSnapshot(s, snapAt(10)); err != nil {
		t.Fatal(err)
	}
	s.awaitSnapshot(15)
	if _, err := s.Snapshot(); err != raft.ErrSnapshotTemporarilyUnavailable {
		t.Fatalf("Snapshot while one past 15 is awaited: err = %v, want ErrSnapshotTemporarilyUnavailable", err)
	}
	if err := storeTestSnapshot(s, snapAt(20)); err != nil {
		t.Fatal(err)
	}
	if snap, err := s.Snapshot(); err != nil || snap.GetMetadata().GetIndex() != 20 {
		t.Fatalf("Snapshot once one at 20 is stored: %v, %v", snap.GetMetadata(), err)
	}
	s.awaitSnapshot(25)
	s.awaitSnapshot(0) // given up: the stored one again
	if snap, err := s.Snapshot(); err != nil || snap.GetMetadata().GetIndex() != 20 {
		t.Fatalf("Snapshot after giving up the wait: %v, %v", snap.GetMetadata(), err)
	}
}

// TestStorageRemovedMembers: another member's removal is kept, and
// forgotten when the member is added again, by a configuration change or
// by a snapshot whose membership lists it; the removals a snapshot carries
// are added; all of it survives a reopen.
func TestStorageRemovedMembers(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	if err := s.save(hardState(1, 1, 30), ents(1, 30, 1, "a"), nil, nil); err != nil {
		t.Fatal(err)
	}
	cs := raftpb.EnsureConfState(&raftpb.ConfState{Voters: []uint64{1, 2}})
	for _, mc := range []memberChange{
		{id: 3, remove: true, index: 5},
		{id: 4, remove: true, index: 6},
		{id: 1, remove: true, self: true, index: 7}, // this node: meta/removed, not the set
	} {
		if err := s.saveConfChange(cs, mc); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.db.removedMembers()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[uint64]uint64{3: 5, 4: 6}, got); diff != "" {
		t.Fatalf("removed members (-want +got):\n%s", diff)
	}
	if err := s.saveConfChange(cs, memberChange{id: 3, context: []byte("back"), index: 8}); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{Data: []byte("state"),
		Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(40)), Term: new(uint64(1)), ConfState: cs}}
	sm := &snapMembers{contexts: map[uint64][]byte{2: nil, 4: []byte("four")}, removed: map[uint64]uint64{4: 6, 9: 30}}
	if err := s.save(hardState(1, 1, 40), nil, snap, sm); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStorage(t, dir)
	if got, err := s.db.removedMembers(); err != nil || !maps.Equal(got, map[uint64]uint64{9: 30}) {
		t.Fatalf("removed members after re-adding 3 and a snapshot listing 4 and removed 9: %v, %v; want only 9 (at 30)", got, err)
	}
	if s.db.removedAt() != 7 {
		t.Errorf("removedAt = %d, want 7", s.db.removedAt())
	}
}
