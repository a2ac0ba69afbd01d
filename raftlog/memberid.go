package raftlog

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// A log records the raft id of the member it belongs to (meta/member), so
// that a restart runs with the id the member was started with the first
// time, whatever derives ids from names: the first member of a cluster
// and those added later get their ids differently (the caller's
// business), and ids are never reused. A log written before ids were
// recorded gets Config.ID recorded at its next Start.

// keyMember is meta/member: 8 bytes big-endian, the member's raft id.
var keyMember = []byte("member")

// checkMemberID refuses, at Start and before anything is written, a log
// that records another member id than cfg.ID: the data dir is another
// member's.
func checkMemberID(cfg Config, st *Storage) error {
	if recorded := st.db.memberID(); recorded != 0 && recorded != cfg.ID {
		return fmt.Errorf("%w: the raft log in %s belongs to member %s, not to member %s", ErrMemberIDMismatch, cfg.Dir, FormatID(recorded), FormatID(cfg.ID))
	}
	return nil
}

// recordMemberID records cfg.ID in a log that records no member id yet (a
// new log, or one written before ids were recorded), once Start checked
// the log fits cfg.
func recordMemberID(cfg Config, st *Storage) error {
	if st.db.memberID() != 0 {
		return nil
	}
	return st.db.setMemberID(cfg.ID)
}

// memberID returns the recorded member id, 0 if none is.
func (d *raftDB) memberID() uint64 {
	var id uint64
	_ = d.bolt.View(func(tx *bolt.Tx) error {
		id = readMemberID(vaultOf(tx, bucketMeta))
		return nil
	})
	return id
}

// readMemberID reads meta/member from the meta bucket, 0 if it is absent.
func readMemberID(meta vault) uint64 {
	if v := meta.value(keyMember); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// setMemberID records id as the log's member id.
func (d *raftDB) setMemberID(id uint64) error {
	err := d.bolt.Update(func(tx *bolt.Tx) error {
		return vaultOf(tx, bucketMeta).put(keyMember, u64(id))
	})
	if err != nil {
		return fmt.Errorf("raftlog: save member id: %w", err)
	}
	return nil
}
