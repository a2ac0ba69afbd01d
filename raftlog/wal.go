package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/metalog/metalog/internal/durable"
)

// The write-ahead log holds the raft entries and hard states, appended to
// segment files
//
//	<dir>/wal/<seq as 16 hex digits>.wal
//
// with one record per Storage.save (the entries and hard state of one
// Ready), written with one write and one fdatasync:
//
//	crc32c (4 bytes big-endian, Castagnoli) of everything after it
//	length (4 bytes big-endian) of the payload
//	type   (1 byte, walRecBatch)
//	payload:
//	  hard state length (4 bytes) and raftpb.HardState (may be empty)
//	  first index (8 bytes), entry count (4 bytes)
//	  per entry: length (4 bytes), term (8 bytes), raftpb.Entry
//
// A batch replaces every entry at or after its first index (a conflicting
// tail written under an older leader), so replaying the records in order
// rebuilds the log; the last hard state wins. Every segment but the one a
// snapshot starts begins with a record holding the hard state at its
// creation, so dropping older segments never loses the newest hard state.
//
// raft.db names the first segment to replay (meta/walstart, set when a
// snapshot replaces the log, together with the hard state at that point)
// and the compaction point: entries at or before it are not indexed, and
// segments whose entries are all at or before it are deleted. A record torn
// at the end of the last segment (a crash mid-write) is cut off at open;
// a bad record anywhere else is an error.
const (
	walDirName    = "wal"
	walSuffix     = ".wal"
	walHeaderLen  = 9
	walRecBatch   = 1
	walEntHdrLen  = 12
	walMaxPayload = 1 << 31
)

// walSegmentBytes is the size after which appends go to a new segment.
// Segments grow by walPreallocBytes at a time, allocated ahead of the
// writes (zeros to a reader) so that an append does not change the file's
// size, and its fdatasync need not commit metadata.
var (
	walSegmentBytes  int64 = 64 << 20
	walPreallocBytes int64 = 4 << 20
)

type walSeg struct {
	seq      uint64
	f        *os.File
	size     int64  // end of the records
	alloc    int64  // length of the file (size plus preallocated zeros)
	maxIndex uint64 // highest entry index written to it (0 if none)
}

// walEnt locates one indexed entry: its encoded raftpb.Entry is size bytes
// at off in segment seg.
type walEnt struct {
	seg  *walSeg
	off  int64
	size uint32
	term uint64
}

type wal struct {
	dir   string
	segs  []*walSeg // ascending, contiguous sequence numbers; never empty once open
	first uint64    // index of ents[0]: the compaction point + 1
	ents  []walEnt
	buf   []byte
	// hs is the newest hard state on disk, for the first record of a new
	// segment: not the one being saved, which must not be durable without
	// the entries saved with it (its commit index may cover them).
	hs *raftpb.HardState
	// fsync observes the latency of each record's fdatasync.
	fsync prometheus.Observer
}

func walFileName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, walSuffix) }

func parseWALFileName(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, walSuffix)
	if !ok || len(base) != 16 {
		return 0, false
	}
	var seq uint64
	if _, err := fmt.Sscanf(base, "%016x", &seq); err != nil {
		return 0, false
	}
	return seq, true
}

// openWAL replays the segments from start on (deleting older ones) and
// returns the log with the entries after compIndex indexed, and the newest
// hard state (hs if no record holds one). Each record's fdatasync is
// observed into fsync.
func openWAL(dir string, start, compIndex uint64, hs *raftpb.HardState, fsync prometheus.Observer) (*wal, *raftpb.HardState, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("raftlog: create wal directory: %w", err)
		}
		if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
			return nil, nil, fmt.Errorf("raftlog: sync directory of %s: %w", dir, err)
		}
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("raftlog: read wal directory: %w", err)
	}
	var seqs []uint64
	for _, de := range des {
		if seq, ok := parseWALFileName(de.Name()); ok {
			if seq < start {
				_ = os.Remove(filepath.Join(dir, de.Name()))
				continue
			}
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	w := &wal{dir: dir, first: compIndex + 1, fsync: fsync}
	fail := func(err error) (*wal, *raftpb.HardState, error) {
		w.close()
		return nil, nil, err
	}
	for i, seq := range seqs {
		if i > 0 && seq != seqs[i-1]+1 {
			return fail(fmt.Errorf("raftlog: %w", damage(filepath.Join(dir, walFileName(seqs[i-1]+1)), DamageMissing, "", "the segment is missing (found %d after %d)", seq, seqs[i-1])))
		}
		h, err := w.replay(seq, i == len(seqs)-1)
		if err != nil {
			return fail(err)
		}
		if h != nil {
			hs = h
		}
	}
	if len(w.segs) == 0 {
		if _, err := w.createSegment(max(start, 1)); err != nil {
			return fail(err)
		}
	}
	w.hs = hs
	if last := w.segs[len(w.segs)-1]; last.size == 0 {
		// A new segment, or one whose first record was torn: give it the
		// hard state it is meant to start with.
		if err := w.write(last, hs, nil); err != nil {
			return fail(err)
		}
	}
	return w, hs, nil
}

// replay reads segment seq, indexes its entries and returns the last hard
// state in it. A torn record at the end of the last segment is cut off.
func (w *wal) replay(seq uint64, last bool) (*raftpb.HardState, error) {
	path := filepath.Join(w.dir, walFileName(seq))
	f, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("raftlog: open wal segment: %w", err)
	}
	seg := &walSeg{seq: seq, f: f}
	w.segs = append(w.segs, seg)
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("raftlog: read wal segment %s: %w", path, err)
	}
	seg.alloc = int64(len(b))
	hs, end, torn, err := w.scan(seg, b, last)
	if err != nil {
		return nil, fmt.Errorf("raftlog: wal segment corrupt: %w", damage(path, walDamageKind(err), fmt.Sprintf("offset %d of %d", end, len(b)), "%v", err))
	}
	if torn != nil {
		if err := f.Truncate(int64(end)); err != nil {
			return nil, fmt.Errorf("raftlog: cut torn record off wal segment %s: %w", path, err)
		}
		if err := fdatasync(f); err != nil {
			return nil, fmt.Errorf("raftlog: sync wal segment %s: %w", path, err)
		}
		seg.alloc = int64(end)
	}
	seg.size = int64(end)
	if _, err := f.Seek(seg.size, io.SeekStart); err != nil {
		return nil, err
	}
	return hs, nil
}

// scan indexes the records of segment seg, whose bytes are b, and returns
// the last hard state in them and the end of the good records: the offset
// of the bad record, if any. A bad record that a crash in the middle of
// the last write explains (torn, its reason) ends the records of the last
// segment; any other is an error. With w nil only the records' framing and
// checksums are checked (CheckLog, past a damage).
func (w *wal) scan(seg *walSeg, b []byte, last bool) (hs *raftpb.HardState, end int, torn, err error) {
	for end < len(b) && !allZero(b[end:]) {
		rec, n, isTorn, err := parseWALRecord(b[end:])
		if err == nil {
			var h *raftpb.HardState
			if w != nil {
				h, err = w.applyRecord(seg, int64(end), rec)
			}
			if err == nil {
				if h != nil {
					hs = h
				}
				end += n
				continue
			}
		}
		if isTorn && last {
			return hs, end, err, nil
		}
		return hs, end, nil, err
	}
	return hs, end, nil, nil
}

// walDamageKind is the kind of damage of err, from scan.
func walDamageKind(err error) string {
	if errors.Is(err, errWALChecksum) {
		return DamageChecksum
	}
	return DamageRecord
}

// errWALChecksum is the error of a wal record whose checksum does not
// match its bytes.
var errWALChecksum = errors.New("record checksum mismatch")

// parseWALRecord checks the record at the start of b and returns its
// payload and length. torn reports a failure that a crash in the middle of
// the last write explains: the record runs past the end of b, or it is bad
// and nothing but zeros (preallocated space) follows it.
func parseWALRecord(b []byte) (payload []byte, n int, torn bool, err error) {
	if len(b) < walHeaderLen {
		return nil, 0, true, fmt.Errorf("record header cut short (%d bytes)", len(b))
	}
	size := binary.BigEndian.Uint32(b[4:])
	if uint64(walHeaderLen)+uint64(size) > uint64(len(b)) {
		return nil, 0, true, fmt.Errorf("record of %d bytes runs past the end", size)
	}
	n = walHeaderLen + int(size)
	if got, want := crc32.Checksum(b[4:n], crcTable), binary.BigEndian.Uint32(b); got != want {
		return nil, 0, allZero(b[n:]), fmt.Errorf("%w: header %08x, data %08x", errWALChecksum, want, got)
	}
	if b[8] != walRecBatch {
		return nil, 0, false, fmt.Errorf("unknown record type %d", b[8])
	}
	return b[walHeaderLen:n], n, false, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// applyRecord indexes the entries of the batch payload rec found at off in
// seg and returns its hard state, if any.
func (w *wal) applyRecord(seg *walSeg, off int64, rec []byte) (*raftpb.HardState, error) {
	bad := errors.New("batch record malformed")
	if len(rec) < 4 {
		return nil, bad
	}
	hsLen := int(binary.BigEndian.Uint32(rec))
	if len(rec) < 4+hsLen+12 {
		return nil, bad
	}
	var hs *raftpb.HardState
	if hsLen > 0 {
		hs = &raftpb.HardState{}
		if err := proto.Unmarshal(rec[4:4+hsLen], hs); err != nil {
			return nil, fmt.Errorf("decode hard state: %w", err)
		}
	}
	p := 4 + hsLen
	first := binary.BigEndian.Uint64(rec[p:])
	count := int(binary.BigEndian.Uint32(rec[p+8:]))
	p += 12
	if count == 0 {
		return hs, nil
	}
	if last := w.last(); first > last+1 {
		return nil, fmt.Errorf("batch at %d leaves a gap after last index %d", first, last)
	}
	// The batch replaces everything from its first index on.
	w.ents = w.ents[:max(first, w.first)-w.first]
	for i := range count {
		if len(rec)-p < walEntHdrLen {
			return nil, bad
		}
		size := binary.BigEndian.Uint32(rec[p:])
		term := binary.BigEndian.Uint64(rec[p+4:])
		p += walEntHdrLen
		if uint64(len(rec)-p) < uint64(size) {
			return nil, bad
		}
		if index := first + uint64(i); index >= w.first {
			w.ents = append(w.ents, walEnt{seg: seg, off: off + walHeaderLen + int64(p), size: size, term: term})
			seg.maxIndex = max(seg.maxIndex, index)
		}
		p += int(size)
	}
	if p != len(rec) {
		return nil, bad
	}
	return hs, nil
}

// lastSegment is the path of the newest segment.
func (w *wal) lastSegment() string {
	return filepath.Join(w.dir, walFileName(w.segs[len(w.segs)-1].seq))
}

func (w *wal) last() uint64 { return w.first + uint64(len(w.ents)) - 1 }

// createSegment creates the empty segment seq and makes it durable.
func (w *wal) createSegment(seq uint64) (*walSeg, error) {
	path := filepath.Join(w.dir, walFileName(seq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("raftlog: create wal segment: %w", err)
	}
	if err := durable.SyncDir(w.dir); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("raftlog: sync wal directory %s: %w", w.dir, err)
	}
	seg := &walSeg{seq: seq, f: f}
	w.segs = append(w.segs, seg)
	w.grow(seg, 0)
	return seg, nil
}

// append durably writes hs (nil for none) and ents, which must start after
// the compaction point and at most one past the last index, in one record
// with one fdatasync, replacing the entries from ents[0] on.
func (w *wal) append(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	seg := w.segs[len(w.segs)-1]
	if seg.size >= walSegmentBytes {
		var err error
		if seg, err = w.createSegment(seg.seq + 1); err != nil {
			return err
		}
		if err := w.write(seg, w.hs, nil); err != nil {
			return err
		}
	}
	return w.write(seg, hs, ents)
}

func (w *wal) write(seg *walSeg, hs *raftpb.HardState, ents []*raftpb.Entry) error {
	b := append(w.buf[:0], make([]byte, walHeaderLen+4)...)
	if hs != nil {
		var err error
		if b, err = (proto.MarshalOptions{}).MarshalAppend(b, hs); err != nil {
			return fmt.Errorf("raftlog: encode hard state: %w", err)
		}
	}
	binary.BigEndian.PutUint32(b[walHeaderLen:], uint32(len(b)-walHeaderLen-4))
	var first uint64
	if len(ents) > 0 {
		first = ents[0].GetIndex()
	}
	b = binary.BigEndian.AppendUint64(b, first)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ents)))
	locs := make([]walEnt, len(ents))
	for i, e := range ents {
		if want := first + uint64(i); e.GetIndex() != want {
			panic(fmt.Sprintf("raftlog: entries not contiguous: entry %d has index %d, want %d", i, e.GetIndex(), want))
		}
		p := len(b)
		b = append(b, make([]byte, walEntHdrLen)...)
		var err error
		if b, err = (proto.MarshalOptions{}).MarshalAppend(b, e); err != nil {
			return fmt.Errorf("raftlog: encode entry %d: %w", e.GetIndex(), err)
		}
		size := len(b) - p - walEntHdrLen
		binary.BigEndian.PutUint32(b[p:], uint32(size))
		binary.BigEndian.PutUint64(b[p+4:], e.GetTerm())
		locs[i] = walEnt{seg: seg, off: seg.size + int64(p) + walEntHdrLen, size: uint32(size), term: e.GetTerm()}
	}
	if len(b)-walHeaderLen > walMaxPayload {
		return fmt.Errorf("raftlog: wal record of %d bytes too large", len(b))
	}
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)-walHeaderLen))
	b[8] = walRecBatch
	binary.BigEndian.PutUint32(b, crc32.Checksum(b[4:], crcTable))
	w.buf = b
	w.grow(seg, int64(len(b)))
	if _, err := seg.f.WriteAt(b, seg.size); err != nil {
		// The caller reopens: the replay cuts off what was written.
		return fmt.Errorf("raftlog: write wal segment %s: %w", seg.f.Name(), err)
	}
	start := time.Now()
	if err := syncRecord(seg.f); err != nil {
		// What reached the disk is unknown: the caller must reopen, and
		// never sync again what it may have lost (the node stops).
		return fmt.Errorf("raftlog: sync wal segment %s: %w", seg.f.Name(), err)
	}
	w.fsync.Observe(time.Since(start).Seconds())
	seg.size += int64(len(b))
	seg.alloc = max(seg.alloc, seg.size)
	if hs != nil {
		w.hs = hs
	}
	if len(ents) > 0 {
		w.ents = append(w.ents[:first-w.first], locs...)
		seg.maxIndex = max(seg.maxIndex, first+uint64(len(ents))-1)
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return nil
}

// grow preallocates space in seg for n more bytes, and some ahead. Without
// it (the file system cannot), writes just extend the file.
func (w *wal) grow(seg *walSeg, n int64) {
	if seg.size+n <= seg.alloc {
		return
	}
	to := max(seg.size+n, seg.alloc+walPreallocBytes)
	if preallocate(seg.f, seg.alloc, to-seg.alloc) == nil {
		seg.alloc = to
	}
}

// term returns the term of indexed entry i.
func (w *wal) term(i uint64) uint64 { return w.ents[i-w.first].term }

// read decodes the entries [lo, hi), at least one, and no more than maxSize
// encoded bytes beyond the first.
func (w *wal) read(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	locs := w.ents[lo-w.first : hi-w.first]
	n, size := 1, uint64(locs[0].size)
	for ; n < len(locs); n++ {
		size += uint64(locs[n].size)
		if size > maxSize {
			break
		}
	}
	locs = locs[:n]
	out := make([]*raftpb.Entry, 0, n)
	var buf []byte
	for len(locs) > 0 {
		// One read for a run of entries stored back to back.
		run, end := 1, locs[0].off+int64(locs[0].size)
		for run < len(locs) && locs[run].seg == locs[0].seg && locs[run].off == end+walEntHdrLen {
			end = locs[run].off + int64(locs[run].size)
			run++
		}
		start := locs[0].off
		if need := int(end - start); cap(buf) < need {
			buf = make([]byte, need)
		}
		b := buf[:end-start]
		if _, err := locs[0].seg.f.ReadAt(b, start); err != nil {
			return nil, fmt.Errorf("raftlog: read wal segment %s at %d: %w", locs[0].seg.f.Name(), start, err)
		}
		for _, l := range locs[:run] {
			e := &raftpb.Entry{}
			p := l.off - start
			want := lo + uint64(len(out))
			if err := proto.Unmarshal(b[p:p+int64(l.size)], e); err != nil {
				return nil, fmt.Errorf("raftlog: wal segment %s: decode entry %d: %w", l.seg.f.Name(), want, err)
			}
			if e.GetIndex() != want {
				return nil, fmt.Errorf("raftlog: wal segment %s: entry %d at offset %d has index %d", l.seg.f.Name(), want, l.off, e.GetIndex())
			}
			out = append(out, e)
		}
		locs = locs[run:]
	}
	return out, nil
}

// compact forgets the entries at or before index and deletes the segments
// holding only such entries (never the last one).
func (w *wal) compact(index uint64) {
	if index < w.first {
		return
	}
	drop := min(index-w.first+1, uint64(len(w.ents)))
	w.ents = slices.Clone(w.ents[drop:])
	w.first = index + 1
	n := 0
	for n < len(w.segs)-1 && w.segs[n].maxIndex <= index {
		n++
	}
	w.dropSegments(n)
}

// dropSegments closes and deletes the first n segments, oldest first, so
// a crash leaves a contiguous run.
func (w *wal) dropSegments(n int) {
	for _, seg := range w.segs[:n] {
		_ = seg.f.Close()
		_ = os.Remove(seg.f.Name())
	}
	w.segs = slices.Delete(w.segs, 0, n)
}

// newSegment creates the next segment, for a log about to be replaced by a
// snapshot; raft.db names it as the start of the log, then reset drops the
// segments before it.
func (w *wal) newSegment() (uint64, error) {
	seg, err := w.createSegment(w.segs[len(w.segs)-1].seq + 1)
	if err != nil {
		return 0, err
	}
	return seg.seq, nil
}

// reset empties the log, which now starts after index, keeping only the
// last segment.
func (w *wal) reset(index uint64) {
	w.dropSegments(len(w.segs) - 1)
	w.ents = nil
	w.first = index + 1
}

func (w *wal) close() error {
	var errs []error
	for _, seg := range w.segs {
		errs = append(errs, seg.f.Close())
	}
	w.segs = nil
	return errors.Join(errs...)
}

// walSyncHook, when set, stands in for fdatasync after a wal record is
// written: the tests make the sync fail.
var walSyncHook atomic.Pointer[func(*os.File) error]

// syncRecord makes a written wal record durable.
func syncRecord(f *os.File) error {
	if h := walSyncHook.Load(); h != nil {
		return (*h)(f)
	}
	return fdatasync(f)
}
