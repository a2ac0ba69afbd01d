package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/metalog/metalog/internal/boltcheck"
)

// A log records, from the Start that creates it, the id of the cluster it
// belongs to and whether that Start bootstrapped a cluster or joined one.
// The id travels with the member's raft traffic (stream.go, snapshots), so
// a member never takes part in another cluster's log; the origin makes a
// join that did not complete resume as a join, never as a cluster of its
// own.

// Origin is how the Start that created a log began it.
type Origin byte

// Origins.
const (
	// OriginUnknown is a log written before origins were recorded.
	OriginUnknown Origin = 0
	// OriginBootstrap is a log bootstrapped from Config.Peers.
	OriginBootstrap Origin = 'b'
	// OriginJoin is a log started empty to join a running cluster.
	OriginJoin Origin = 'j'
)

// HistoryNaming is what a log records about naming its cluster's history
// (the member above names it through the log, with a random nonce, so
// that its history id is new for every bootstrap, restore and forcing).
// Only a log begun by a build that names histories records one: a
// cluster whose logs were begun before keeps a history id derived from
// its cluster id alone, the same on every member, and never proposes a
// name, so that members of an older build, which cannot apply a name,
// never hold another history id than those upgraded.
type HistoryNaming byte

// Namings.
const (
	// NamingNone is a log begun by a build before history names, or one
	// that joined a cluster whose history has no name.
	NamingNone HistoryNaming = 0
	// NamingBegun is a log that began a new history: a bootstrap
	// (Config.Naming) or a forcing (ForceNewCluster). Its member names the
	// history.
	NamingBegun HistoryNaming = 'n'
	// NamingExpected is a log that joined a cluster whose history is
	// named (or will be): its member waits for the name from the log.
	NamingExpected HistoryNaming = 'e'
)

// DataDir is what a data directory's raft.db says about the member whose
// log it holds, as Inspect reads it before Start.
type DataDir struct {
	// Exists is false when the directory holds no raft.db.
	Exists bool
	// ClusterID is the id of the cluster the log belongs to, 0 when none
	// is recorded (a log written before ids).
	ClusterID uint64
	// Origin is how the log was begun.
	Origin Origin
	// Naming is what the log records about naming its history.
	Naming HistoryNaming
	// MemberID is the raft id of the member the log belongs to, recorded
	// at its first Start; 0 for a log written before ids were recorded.
	MemberID uint64
	// HasMembership reports that the log holds a configuration: the member
	// applied a membership change or installed a snapshot. A log begun to
	// join (OriginJoin) without one is a join that did not complete.
	HasMembership bool
	// Voters and Learners are the ids of the last configuration applied.
	Voters, Learners []uint64
	// Members are the stored member contexts by id (Peer.Context): where
	// the other members were last known to be.
	Members map[uint64][]byte
	// Forcings are the forcings of the log (ForceNewCluster), oldest
	// first; ClusterID is the last one's To.
	Forcings []Forcing
	// ForcedAway is set when a member of a newer cluster told this member
	// that its cluster was forced into that one (Start refuses the log):
	// ForcedAwayBy says how.
	ForcedAway   bool
	ForcedAwayBy Forcing
}

// Inspect reads what dir's raft.db records about its log, without opening
// the log itself (a quick read, for deciding how to Start). It returns
// DataDir{Exists: false} for a directory without raft.db, an error
// wrapping ErrLocked while another process has the log open, and one
// matching ErrDamaged for a damaged raft.db (its pages are checked before
// bbolt maps it).
func Inspect(dir string) (DataDir, error) {
	path := filepath.Join(dir, storageFile)
	if err := checkPresent(dir); err != nil {
		return DataDir{}, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return DataDir{}, nil
	}
	if err := verifyBolt(path, false, defaultLockTimeout); err != nil {
		return DataDir{}, err
	}
	var dd DataDir
	err := boltcheck.Guard(path, func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: defaultLockTimeout, ReadOnly: true})
		if err != nil {
			return err
		}
		defer db.Close()
		dd, err = inspectDB(db, path)
		return err
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return DataDir{}, fmt.Errorf("%w: %s", ErrLocked, path)
	case errors.Is(err, ErrDamaged):
		return DataDir{}, fmt.Errorf("raftlog: %w", err)
	case err != nil:
		return DataDir{}, fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	return dd, nil
}

// inspectDB reads what Inspect returns from raft.db, open at path. The
// seals of a sealed file are checked: a damaged value is ErrDamaged.
func inspectDB(db *bolt.DB, path string) (DataDir, error) {
	dd := DataDir{Exists: true}
	err := db.View(func(tx *bolt.Tx) error {
		meta := vaultOf(tx, bucketMeta)
		if meta.b == nil {
			return nil // created, never written
		}
		if _, err := checkSeals(tx); err != nil {
			return err
		}
		dd.ClusterID, dd.Origin = readIdentity(meta)
		dd.Naming = readNaming(meta)
		dd.MemberID = readMemberID(meta)
		cs := &raftpb.ConfState{}
		if v := meta.value(keyConfState); v != nil {
			if err := proto.Unmarshal(v, cs); err != nil {
				return damage(path, DamageRecord, "meta/confstate", "the configuration does not decode: %v", err)
			}
		}
		dd.HasMembership = len(cs.GetVoters()) > 0 || len(cs.GetLearners()) > 0
		dd.Voters, dd.Learners = cs.GetVoters(), cs.GetLearners()
		dd.Forcings = readForcings(meta)
		dd.ForcedAwayBy, dd.ForcedAway = decodeForcing(meta.value(keyForcedOff))
		dd.Members = map[uint64][]byte{}
		if b := vaultOf(tx, bucketMembers); b.b != nil {
			return b.forEach(func(k, v []byte) error {
				if len(k) == 8 {
					dd.Members[binary.BigEndian.Uint64(k)] = append([]byte{}, v...)
				}
				return nil
			})
		}
		return nil
	})
	return dd, named(path, err)
}

// checkIdentity reconciles the log's recorded identity with cfg at Start:
// it refuses a log of another cluster and a join that did not complete
// started without Join, and records the identity of a new log. It returns
// the cluster id the node runs with.
func checkIdentity(cfg Config, st *Storage, isNew bool) (uint64, error) {
	stored, origin := st.db.identity()
	if stored != 0 && cfg.ClusterID != 0 && stored != cfg.ClusterID {
		return 0, fmt.Errorf("%w: the raft log in %s belongs to cluster %s, not to cluster %s", ErrClusterMismatch, cfg.Dir, FormatID(stored), FormatID(cfg.ClusterID))
	}
	if !isNew {
		return stored, nil // a log written before ids keeps none: 0 is not checked
	}
	if origin == OriginJoin && !cfg.Join {
		return 0, fmt.Errorf("%w (%s): start the member again with --join to resume it, or delete the directory to start over", ErrJoinIncomplete, cfg.Dir)
	}
	id := cfg.ClusterID
	if id == 0 {
		id = stored
	}
	want := OriginBootstrap
	if cfg.Join {
		want = OriginJoin
	}
	if id != stored || want != origin || cfg.Naming != st.db.naming() {
		if err := st.db.setIdentity(id, want, cfg.Naming); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// FormatID is how ids appear to users, in logs and on the wire: member,
// cluster and history ids alike, lowercase hex without padding, as raft
// itself prints member ids and etcd prints its ids.
func FormatID(id uint64) string { return strconv.FormatUint(id, 16) }
