package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/metalog/metalog/internal/boltcheck"
)

// raft.db's buckets and keys; storage.go has the layout.
var (
	bucketEntries = []byte("entries")
	bucketMeta    = []byte("meta")
	bucketMembers = []byte("members")
	bucketRemoved = []byte("removed")

	keyFormat    = []byte("format")
	keyHardState = []byte("hardstate")
	keyConfState = []byte("confstate")
	keyCompacted = []byte("compacted")
	keySnapshot  = []byte("snapshot")
	keyBoot      = []byte("boot")
	keyRemoved   = []byte("removed")
	keyWALStart  = []byte("walstart")
	keyCluster   = []byte("cluster")
	keyOrigin    = []byte("origin")
	keyNaming    = []byte("naming")
	keyForced    = []byte("forced")
	keyForcedOff = []byte("forcedaway")
)

// raftDB is raft.db, the bbolt file of a Storage: the metadata that points
// into the write-ahead log and the snapshot files, and the member
// registries (members, removed members, this member's removal, the boot
// counter). Its methods are safe for concurrent use (bbolt serialises
// writers); Storage keeps the in-memory copies of what it reads at open in
// step with what it writes.
type raftDB struct {
	bolt *bolt.DB
	path string
}

// dbState is what raft.db holds for Storage at open.
type dbState struct {
	format    uint64
	hardState *raftpb.HardState // nil if none is stored
	confState *raftpb.ConfState
	// compIndex and compTerm identify the compaction point.
	compIndex, compTerm uint64
	snapMeta            *raftpb.SnapshotMetadata // nil if no snapshot is stored
	walStart            uint64
	// legacy are the entries after the compaction point that format 1
	// kept in raft.db, to move to the write-ahead log.
	legacy []*raftpb.Entry
	// sealedNow reports that this open sealed an older file: the keys it
	// requires are required of files this binary wrote only.
	sealedNow bool
}

// openRaftDB opens (creating if needed) raft.db in dir, waiting at most
// lockTimeout for another process's file lock (ErrLocked). The pages of an
// existing file are checked first, and a panic or fault of bbolt is a
// damage: a damaged file fails with ErrDamaged.
func openRaftDB(dir string, lockTimeout time.Duration) (*raftDB, error) {
	path := filepath.Join(dir, storageFile)
	if err := checkPresent(dir); err != nil {
		return nil, err
	}
	if err := verifyBolt(path, true, lockTimeout); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err := boltcheck.Guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{
			Timeout: lockTimeout,
			// The freelist is rebuilt from the file on open instead of
			// being written at every commit: smaller commits on the hot
			// path.
			NoFreelistSync: true,
			FreelistType:   bolt.FreelistMapType,
		})
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		case errors.Is(err, ErrDamaged):
			return nil, fmt.Errorf("raftlog: %w", err)
		}
		return nil, fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	return &raftDB{bolt: db, path: path}, nil
}

// checkPresent fails with a damage (DamageMissing) naming raft.db when
// dir holds no raft.db beside wal segments or snapshot files: raft.db is
// created before either, so it was lost, and the log cannot be read
// without it (started as a new member, the data dir would serve nothing
// of what it acknowledged).
func checkPresent(dir string) error {
	path := filepath.Join(dir, storageFile)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, sub := range []string{walDirName, snapDirName} {
		if ents, err := os.ReadDir(filepath.Join(dir, sub)); err == nil && len(ents) > 0 {
			return fmt.Errorf("raftlog: %w", damage(path, DamageMissing, "", "the file is missing beside the files of %s/", sub))
		}
	}
	return nil
}

func (d *raftDB) close() error { return d.bolt.Close() }

// damaged is a damaged value of raft.db at where (bucket/key).
func (d *raftDB) damaged(where, format string, args ...any) error {
	return fmt.Errorf("raftlog: %w", damage(d.path, DamageRecord, where, format, args...))
}

// named turns a damage found inside a transaction (*damageAt) into a
// damage of raft.db at path (ErrDamaged); other errors are returned as
// they are.
func named(path string, err error) error {
	var at *damageAt
	if errors.As(err, &at) {
		return fmt.Errorf("raftlog: %w", damage(path, at.kind, at.where, "%s", at.detail))
	}
	return err
}

// read creates the buckets of a new file, seals an older one, and reads
// everything Storage keeps in memory. A value that does not match its
// seal or does not decode, a key or bucket missing, or a read that makes
// bbolt panic, is a damage (ErrDamaged).
func (d *raftDB) read() (dbState, error) {
	var st dbState
	err := boltcheck.Guard(d.path, func() error {
		return d.bolt.Update(func(tx *bolt.Tx) error {
			st.sealedNow = !fileSealed(tx) && !isEmpty(tx)
			if err := prepareFile(tx, d.path); err != nil {
				return err
			}
			if err := d.readMeta(tx, &st); err != nil {
				return err
			}
			if st.format == 1 {
				return d.readLegacy(tx.Bucket(bucketEntries), &st)
			}
			return nil
		})
	})
	return st, named(d.path, err)
}

// prepareFile readies tx's file for reading: the buckets and sealed format of
// a new file (one without buckets), the buckets an older release did not
// create, the seals of a format 2 file. A sealed file must hold its four
// buckets and no other.
func prepareFile(tx *bolt.Tx, path string) error {
	names := [][]byte{bucketEntries, bucketMeta, bucketMembers, bucketRemoved}
	if tx.Bucket(bucketMeta) == nil && isEmpty(tx) {
		for _, b := range names {
			if _, err := tx.CreateBucket(b); err != nil {
				return fmt.Errorf("raftlog: %s: %w", path, err)
			}
		}
		return vault{b: tx.Bucket(bucketMeta), name: bucketMeta, sealed: true}.put(keyFormat, u64(storageFormat))
	}
	format, err := fileFormat(tx, path)
	if err != nil {
		return err
	}
	if fileSealed(tx) {
		return checkBuckets(tx, names)
	}
	for _, b := range names {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return fmt.Errorf("raftlog: %s: %w", path, err)
		}
	}
	if format == 2 {
		return sealAll(tx)
	}
	return nil
}

// isEmpty reports whether tx's file has no bucket: a new file.
func isEmpty(tx *bolt.Tx) bool {
	k, _ := tx.Cursor().First()
	return k == nil
}

// checkBuckets fails with a damage if tx lacks one of the buckets names,
// or has another.
func checkBuckets(tx *bolt.Tx, names [][]byte) error {
	found := 0
	err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		for _, n := range names {
			if string(n) == string(name) {
				found++
				return nil
			}
		}
		return &damageAt{where: fmt.Sprintf("bucket %q", name), kind: DamageRecord, detail: "a bucket raft.db does not have"}
	})
	if err != nil {
		return err
	}
	if found != len(names) {
		return &damageAt{where: "buckets", kind: DamageMissing, detail: fmt.Sprintf("%d of the %d buckets are missing", len(names)-found, len(names))}
	}
	return nil
}

// fileFormat returns the storage format tx's file records: 1 or 2 unsealed,
// storageFormat sealed. A missing or malformed format is a damage.
func fileFormat(tx *bolt.Tx, path string) (uint64, error) {
	meta := vaultOf(tx, bucketMeta)
	if meta.b == nil {
		return 0, &damageAt{where: "bucket \"meta\"", kind: DamageMissing, detail: "the bucket is missing"}
	}
	v, err := meta.get(keyFormat)
	switch {
	case err != nil:
		return 0, err
	case v == nil:
		return 0, &damageAt{where: "meta/format", kind: DamageMissing, detail: "no storage format is recorded"}
	case len(v) != 8:
		return 0, &damageAt{where: "meta/format", kind: DamageRecord, detail: fmt.Sprintf("%d bytes, want 8", len(v))}
	}
	f := binary.BigEndian.Uint64(v)
	if meta.sealed != (f == storageFormat) || f == 0 || f > storageFormat {
		return 0, fmt.Errorf("raftlog: %s has storage format %d, this binary reads format %d", path, f, storageFormat)
	}
	return f, nil
}

// readMeta reads the meta bucket of tx into st, checking the seals of
// every value of meta, members and removed first (keys are looked up by
// name: a damaged key would read as one never written).
func (d *raftDB) readMeta(tx *bolt.Tx, st *dbState) error {
	format, err := fileFormat(tx, d.path)
	if err != nil {
		return err
	}
	st.format = format
	meta := vaultOf(tx, bucketMeta)
	registered, err := checkSeals(tx)
	if err != nil {
		return err
	}
	if v, err := meta.get(keyHardState); err != nil {
		return err
	} else if v != nil {
		hs := &raftpb.HardState{}
		if err := proto.Unmarshal(v, hs); err != nil {
			return d.damaged("meta/hardstate", "the hard state does not decode: %v", err)
		}
		st.hardState = hs
	}
	st.confState = &raftpb.ConfState{}
	if v, err := meta.get(keyConfState); err != nil {
		return err
	} else if v != nil {
		if err := proto.Unmarshal(v, st.confState); err != nil {
			return d.damaged("meta/confstate", "the configuration does not decode: %v", err)
		}
	} else if registered && meta.sealed && !st.sealedNow {
		return &damageAt{where: "meta/confstate", kind: DamageMissing, detail: "the configuration is missing, and the member registry is not empty"}
	}
	return readPoints(meta, st)
}

// checkSeals checks the seal of every value of the meta, members and
// removed buckets of tx (none in an unsealed file), and reports whether
// the log records a membership (a member, a removed one).
func checkSeals(tx *bolt.Tx) (registered bool, err error) {
	for _, name := range [][]byte{bucketMeta, bucketMembers, bucketRemoved} {
		v := vaultOf(tx, name)
		if v.b == nil || !v.sealed {
			continue
		}
		err := v.forEach(func(k, _ []byte) error {
			registered = registered || string(name) != string(bucketMeta) || string(k) == string(keyRemoved)
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	return registered, nil
}

// readPoints reads the compaction point, the snapshot metadata and the
// first wal segment from meta into st.
func readPoints(meta vault, st *dbState) error {
	if v, err := meta.get(keyCompacted); err != nil {
		return err
	} else if v != nil {
		if len(v) != 16 {
			return &damageAt{where: "meta/compacted", kind: DamageRecord, detail: fmt.Sprintf("the compaction point has %d bytes, want 16", len(v))}
		}
		st.compIndex = binary.BigEndian.Uint64(v)
		st.compTerm = binary.BigEndian.Uint64(v[8:])
	}
	if v, err := meta.get(keySnapshot); err != nil {
		return err
	} else if v != nil {
		snap := &raftpb.Snapshot{}
		if err := proto.Unmarshal(v, snap); err != nil {
			return &damageAt{where: "meta/snapshot", kind: DamageRecord, detail: fmt.Sprintf("the snapshot metadata does not decode: %v", err)}
		}
		if snap.GetMetadata().GetIndex() > 0 {
			st.snapMeta = snap.GetMetadata()
		}
	}
	if v, err := meta.get(keyWALStart); err != nil {
		return err
	} else if len(v) == 8 {
		st.walStart = binary.BigEndian.Uint64(v)
	}
	return nil
}

// readLegacy reads the entries format 1 kept in raft.db after the
// compaction point into st.
func (d *raftDB) readLegacy(ents *bolt.Bucket, st *dbState) error {
	want := st.compIndex + 1
	return ents.ForEach(func(k, v []byte) error {
		if i := binary.BigEndian.Uint64(k); i <= st.compIndex {
			return nil
		} else if i != want {
			return fmt.Errorf("raftlog: %s: entry %d missing (found %d)", d.path, want, i)
		}
		e := &raftpb.Entry{}
		if err := proto.Unmarshal(v, e); err != nil {
			return d.damaged(fmt.Sprintf("entries/%d", want), "the entry does not decode: %v", err)
		}
		st.legacy = append(st.legacy, e)
		want++
		return nil
	})
}

// finishMigration records that format 1's entries are in the write-ahead
// log (from its first segment on): they leave raft.db, whose values are sealed, and which says format 3.
func (d *raftDB) finishMigration() error {
	return d.bolt.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketEntries); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketEntries); err != nil {
			return err
		}
		meta := vaultOf(tx, bucketMeta)
		if err := meta.put(keyWALStart, u64(1)); err != nil {
			return err
		}
		return sealAll(tx)
	})
}

// memberChange is the membership bookkeeping of one applied configuration
// change, written together with the resulting ConfState; the zero value
// (id 0) changes no member.
type memberChange struct {
	id      uint64
	context []byte // stored for an addition
	remove  bool
	self    bool // the removal is of this node: record it in meta/removed
	index   uint64
}

// saveConfChange durably records cs, the configuration raft returned from
// ApplyConfChange, and the member change mc in one transaction, so that
// after a restart the voters and Members match.
func (d *raftDB) saveConfChange(cs *raftpb.ConfState, mc memberChange) error {
	v, err := proto.Marshal(cs)
	if err != nil {
		return fmt.Errorf("raftlog: encode conf state: %w", err)
	}
	err = d.bolt.Update(func(tx *bolt.Tx) error {
		meta := vaultOf(tx, bucketMeta)
		if err := meta.put(keyConfState, v); err != nil {
			return err
		}
		if mc.id == 0 {
			return nil
		}
		members, removed := vaultOf(tx, bucketMembers), vaultOf(tx, bucketRemoved)
		if mc.remove {
			if mc.self {
				if err := meta.put(keyRemoved, u64(mc.index)); err != nil {
					return err
				}
			} else if err := removed.put(u64(mc.id), u64(mc.index)); err != nil {
				return err
			}
			return members.b.Delete(u64(mc.id))
		}
		if err := removed.b.Delete(u64(mc.id)); err != nil {
			return err
		}
		return members.put(u64(mc.id), append([]byte{}, mc.context...))
	})
	if err != nil {
		return fmt.Errorf("raftlog: save conf change: %w", err)
	}
	return nil
}

// replaceBySnapshot records, in one transaction, a snapshot received from
// the leader that replaces the log: its metadata, its ConfState, the
// compaction point at its index, the membership it carries (unless nil:
// the member contexts, and the removed members, added to those recorded),
// hs (the hard state as of it) and the wal segment the log after it starts
// in.
func (d *raftDB) replaceBySnapshot(md *raftpb.SnapshotMetadata, cs *raftpb.ConfState, members *snapMembers,
	hs *raftpb.HardState, walStart uint64) error {
	cv, err := proto.Marshal(cs)
	if err != nil {
		return fmt.Errorf("encode conf state: %w", err)
	}
	hv, err := proto.Marshal(hs)
	if err != nil {
		return err
	}
	return d.bolt.Update(func(tx *bolt.Tx) error {
		if err := putSnapshotMeta(tx, md); err != nil {
			return err
		}
		meta := vaultOf(tx, bucketMeta)
		if err := meta.put(keyConfState, cv); err != nil {
			return err
		}
		if err := meta.put(keyCompacted, u128(md.GetIndex(), md.GetTerm())); err != nil {
			return err
		}
		if members != nil {
			if err := putRemoved(tx, members.removed); err != nil {
				return err
			}
			if err := putMembers(tx, members.contexts); err != nil {
				return err
			}
		}
		if err := meta.put(keyHardState, hv); err != nil {
			return err
		}
		return meta.put(keyWALStart, u64(walStart))
	})
}

// storeSnapshotMeta records md as the newest snapshot's metadata.
func (d *raftDB) storeSnapshotMeta(md *raftpb.SnapshotMetadata) error {
	return d.bolt.Update(func(tx *bolt.Tx) error {
		return putSnapshotMeta(tx, md)
	})
}

// putSnapshotMeta records md as the newest snapshot's metadata.
func putSnapshotMeta(tx *bolt.Tx, md *raftpb.SnapshotMetadata) error {
	v, err := proto.Marshal(&raftpb.Snapshot{Metadata: md})
	if err != nil {
		return fmt.Errorf("encode snapshot metadata: %w", err)
	}
	return vaultOf(tx, bucketMeta).put(keySnapshot, v)
}

// putMembers replaces every stored member context by members; a member
// among them is no longer recorded as removed.
func putMembers(tx *bolt.Tx, members map[uint64][]byte) error {
	if err := tx.DeleteBucket(bucketMembers); err != nil {
		return err
	}
	b, err := tx.CreateBucket(bucketMembers)
	if err != nil {
		return err
	}
	mv := vault{b: b, name: bucketMembers, sealed: fileSealed(tx)}
	removed := tx.Bucket(bucketRemoved)
	for id, ctx := range members {
		if err := mv.put(u64(id), ctx); err != nil {
			return err
		}
		if err := removed.Delete(u64(id)); err != nil {
			return err
		}
	}
	return nil
}

// putRemoved records the removed members of a snapshot (id -> index of the
// removal) beside those recorded already; putMembers then drops any that
// the snapshot lists as members (a log of an earlier release may hold an
// id removed and added again).
func putRemoved(tx *bolt.Tx, removed map[uint64]uint64) error {
	b := vaultOf(tx, bucketRemoved)
	for id, index := range removed {
		if err := b.put(u64(id), u64(index)); err != nil {
			return err
		}
	}
	return nil
}

// storeCompacted records (index, term) as the compaction point.
func (d *raftDB) storeCompacted(index, term uint64) error {
	return d.bolt.Update(func(tx *bolt.Tx) error {
		return vaultOf(tx, bucketMeta).put(keyCompacted, u128(index, term))
	})
}

// nextBoot durably increments and returns the boot counter. Proposal ids
// include it so that an entry proposed before a restart can never be
// mistaken for one proposed after it.
func (d *raftDB) nextBoot() (uint64, error) {
	var boot uint64
	err := d.bolt.Update(func(tx *bolt.Tx) error {
		meta := vaultOf(tx, bucketMeta)
		if v := meta.value(keyBoot); len(v) == 8 {
			boot = binary.BigEndian.Uint64(v)
		}
		boot++
		return meta.put(keyBoot, u64(boot))
	})
	if err != nil {
		return 0, fmt.Errorf("raftlog: save boot counter: %w", err)
	}
	return boot, nil
}

// members returns the stored member contexts by id; the slices are the
// caller's.
func (d *raftDB) members() (map[uint64][]byte, error) {
	return readByID(d, bucketMembers, "members", func(v []byte) ([]byte, bool) {
		return append([]byte{}, v...), true
	})
}

// removedMembers returns the other members whose removal this node
// applied (and that were not added again since), by id, with the index of
// their removal.
func (d *raftDB) removedMembers() (map[uint64]uint64, error) {
	return readByID(d, bucketRemoved, "removed members", func(v []byte) (uint64, bool) {
		if len(v) != 8 {
			return 0, false
		}
		return binary.BigEndian.Uint64(v), true
	})
}

// readByID reads a bucket keyed by 8-byte member ids, decoding each value
// with decode (false: malformed).
func readByID[V any](d *raftDB, bucket []byte, what string, decode func([]byte) (V, bool)) (map[uint64]V, error) {
	out := make(map[uint64]V)
	err := d.bolt.View(func(tx *bolt.Tx) error {
		return vaultOf(tx, bucket).forEach(func(k, v []byte) error {
			val, ok := decode(v)
			if len(k) != 8 || !ok {
				return fmt.Errorf("raftlog: %s: malformed %s record (%d-byte key, %d-byte value)", d.path, what, len(k), len(v))
			}
			out[binary.BigEndian.Uint64(k)] = val
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("raftlog: read %s: %w", what, named(d.path, err))
	}
	return out, nil
}

// markRemoved records that this member was removed from the cluster at
// index (at least 1): Start refuses its data directory from now on.
func (d *raftDB) markRemoved(index uint64) error {
	return d.bolt.Update(func(tx *bolt.Tx) error {
		return vaultOf(tx, bucketMeta).put(keyRemoved, u64(max(index, 1)))
	})
}

// removedAt returns the index at which this member's removal was applied,
// or 0.
func (d *raftDB) removedAt() uint64 {
	var at uint64
	_ = d.bolt.View(func(tx *bolt.Tx) error {
		if v := vaultOf(tx, bucketMeta).value(keyRemoved); len(v) == 8 {
			at = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return at
}

// identity returns the cluster id and origin the log was created with
// (zero values for a log written before they were recorded).
func (d *raftDB) identity() (cluster uint64, origin Origin) {
	_ = d.bolt.View(func(tx *bolt.Tx) error {
		cluster, origin = readIdentity(vaultOf(tx, bucketMeta))
		return nil
	})
	return cluster, origin
}

func readIdentity(meta vault) (cluster uint64, origin Origin) {
	if v := meta.value(keyCluster); len(v) == 8 {
		cluster = binary.BigEndian.Uint64(v)
	}
	if v := meta.value(keyOrigin); len(v) == 1 {
		origin = Origin(v[0])
	}
	return cluster, origin
}

// readNaming returns what meta records about naming the log's history
// (NamingNone when nothing: a log written before history names).
func readNaming(meta vault) HistoryNaming {
	if v := meta.value(keyNaming); len(v) == 1 {
		return HistoryNaming(v[0])
	}
	return NamingNone
}

// naming returns what the log records about naming its history.
func (d *raftDB) naming() HistoryNaming {
	n := NamingNone
	_ = d.bolt.View(func(tx *bolt.Tx) error {
		n = readNaming(vaultOf(tx, bucketMeta))
		return nil
	})
	return n
}

// putNaming records n in meta; NamingNone deletes the key, so that the
// log reads as one written before history names.
func putNaming(meta vault, n HistoryNaming) error {
	if n == NamingNone {
		return meta.b.Delete(keyNaming)
	}
	return meta.put(keyNaming, []byte{byte(n)})
}

// setIdentity records the cluster id, the origin and the history naming
// of a new log, in one transaction.
func (d *raftDB) setIdentity(cluster uint64, origin Origin, naming HistoryNaming) error {
	err := d.bolt.Update(func(tx *bolt.Tx) error {
		meta := vaultOf(tx, bucketMeta)
		if err := meta.put(keyCluster, u64(cluster)); err != nil {
			return err
		}
		if err := putNaming(meta, naming); err != nil {
			return err
		}
		return meta.put(keyOrigin, []byte{byte(origin)})
	})
	if err != nil {
		return fmt.Errorf("raftlog: save cluster id: %w", err)
	}
	return nil
}

// recordForcing records forcing f of this log: f.To becomes the log's
// cluster id, f joins the forcings (meta/forced), and the log begins a
// new history (NamingBegun), in one transaction.
func (d *raftDB) recordForcing(f Forcing) error {
	err := d.bolt.Update(func(tx *bolt.Tx) error {
		meta := vaultOf(tx, bucketMeta)
		list := append(append([]byte{}, meta.value(keyForced)...), f.encode()...)
		if err := meta.put(keyForced, list); err != nil {
			return err
		}
		if err := putNaming(meta, NamingBegun); err != nil {
			return err
		}
		return meta.put(keyCluster, u64(f.To))
	})
	if err != nil {
		return fmt.Errorf("raftlog: save the forcing of the log: %w", err)
	}
	return nil
}

// forcings returns the forcings of this log, oldest first.
func (d *raftDB) forcings() []Forcing {
	var out []Forcing
	_ = d.bolt.View(func(tx *bolt.Tx) error {
		out = readForcings(vaultOf(tx, bucketMeta))
		return nil
	})
	return out
}

// readForcings decodes meta/forced; a malformed tail is ignored.
func readForcings(meta vault) []Forcing {
	v := meta.value(keyForced)
	var out []Forcing
	for len(v) >= forcingSize {
		f, _ := decodeForcing(v[:forcingSize])
		out = append(out, f)
		v = v[forcingSize:]
	}
	return out
}

// markForcedAway records that this member's cluster was forced into a new
// one (f, as the forcing member told it): Start refuses the data dir from
// now on.
func (d *raftDB) markForcedAway(f Forcing) error {
	return d.bolt.Update(func(tx *bolt.Tx) error {
		return vaultOf(tx, bucketMeta).put(keyForcedOff, f.encode())
	})
}

// forcedAway returns what markForcedAway recorded, if anything.
func (d *raftDB) forcedAway() (Forcing, bool) {
	var f Forcing
	var ok bool
	_ = d.bolt.View(func(tx *bolt.Tx) error {
		f, ok = decodeForcing(vaultOf(tx, bucketMeta).value(keyForcedOff))
		return nil
	})
	return f, ok
}

func u64(v uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v)
}

func u128(a, b uint64) []byte {
	out := make([]byte, 16)
	binary.BigEndian.PutUint64(out, a)
	binary.BigEndian.PutUint64(out[8:], b)
	return out
}
