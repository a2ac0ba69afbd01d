package raftlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LogState is what a data dir's raft log holds for rebuilding its state
// machine from nothing, as ReadLogState reads it.
type LogState struct {
	// Exists is false when the directory holds no raft.db.
	Exists bool
	// HasMembership reports that the log holds a configuration (as
	// DataDir.HasMembership).
	HasMembership bool
	// CompactedIndex is the last index compacted away, 0 when the log
	// holds every entry from index 1.
	CompactedIndex uint64
	// SnapshotIndex is the index of the newest stored snapshot, 0 for
	// none; its file was read back and matched its checksum.
	SnapshotIndex uint64
	// SnapshotFile is that snapshot's file, "" for none.
	SnapshotFile string
	// LastIndex is the index of the last entry in the log.
	LastIndex uint64
}

// ReadLogState opens the raft log in dir as Start does (raft.db's pages and
// values, every wal segment's records, the newest snapshot's file and
// checksum), reports what it holds and closes it. It changes what Start
// would change at open (a torn record at the end of the log is cut off,
// leftover snapshot files are removed), and nothing else. It returns
// LogState{} for a directory without raft.db, an error matching ErrDamaged
// for a damaged file (ErrBadSnapshotFile too for the snapshot's), and one
// wrapping ErrLocked while another process has the log open.
func ReadLogState(dir string) (LogState, error) {
	if err := checkPresent(dir); err != nil {
		return LogState{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, storageFile)); errors.Is(err, os.ErrNotExist) {
		return LogState{}, nil
	}
	st, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		return LogState{}, err
	}
	st.mu.RLock()
	ls := LogState{
		Exists:         true,
		HasMembership:  len(st.confState.GetVoters()) > 0 || len(st.confState.GetLearners()) > 0,
		CompactedIndex: st.compIndex,
		SnapshotIndex:  st.snaps.index(),
		LastIndex:      st.last,
	}
	if ls.SnapshotIndex > 0 {
		ls.SnapshotFile = st.snaps.path(st.snaps.newest)
	}
	st.mu.RUnlock()
	if err := st.Close(); err != nil {
		return ls, fmt.Errorf("raftlog: close the log in %s: %w", dir, err)
	}
	return ls, nil
}

// Rebuilds reports whether Start, with Config.FromSnapshot and Applied 0,
// rebuilds the state machine from the log alone: from the newest snapshot
// and the entries after it, or, when there is no snapshot and nothing was
// compacted, from every entry since index 1 (which holds the whole state
// only when the state machine began empty: fromOrigin).
func (l LogState) Rebuilds(fromOrigin bool) bool {
	switch {
	case !l.HasMembership:
		return false
	case l.SnapshotIndex > 0:
		return l.SnapshotIndex >= l.CompactedIndex
	}
	return l.CompactedIndex == 0 && fromOrigin
}
