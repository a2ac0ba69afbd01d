package member

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/internal/durable"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// A schema store found damaged at start (metadata.ErrDamaged) is a copy of
// what the raft log holds: when the log can rebuild it (raftlog.ReadLogState:
// the newest snapshot, checked, and the entries after it, or every entry
// from index 1 of a store that began empty), the file is moved aside,
// never deleted, and the member starts on a new store, restored from the
// snapshot and the log. When the log cannot, the member refuses to start
// and says how to recover. A damaged raft log (raft.db, a wal segment, the
// newest snapshot file) is refused the same way: nothing else holds it.

// schemaStoreFile is the schema store's file in the data dir
// (metadata.OpenStore).
const schemaStoreFile = "schema.db"

// storeRebuild opens the state machine for a member's start, rebuilding a
// damaged schema store when the raft log can.
type storeRebuild struct {
	sm     metadata.Config
	member *Config
	logger *slog.Logger
	now    func() time.Time
}

// open opens the state machine. rebuilt reports that the store was found
// damaged and moved aside: the new one is empty, and the raft log must
// restore it from its newest snapshot (raftlog.Config.FromSnapshot).
func (r storeRebuild) open() (sm *metadata.StateMachine, rebuilt bool, err error) {
	sm, err = metadata.Open(r.sm)
	var d *boltcheck.Error
	if err == nil || !errors.As(err, &d) {
		return sm, false, err
	}
	log, err := r.check(err)
	if err != nil {
		return nil, false, err
	}
	path := filepath.Join(r.sm.Dir, schemaStoreFile)
	aside, err := moveAside(path, r.now())
	if err != nil {
		return nil, false, fmt.Errorf("schema store %s is damaged (%v), and moving it aside failed: %w", path, d, err)
	}
	r.logger.Warn("schema store damaged: moved aside, rebuilding it from the raft log",
		"file", d.File, "kind", d.Kind, "where", d.Where, "found", d.Detail, "moved_to", aside,
		"snapshot_index", log.SnapshotIndex, "compacted_index", log.CompactedIndex, "last_index", log.LastIndex)
	if r.sm.Metrics != nil {
		r.sm.Metrics.Rebuilds.WithLabelValues(d.Kind).Inc()
	}
	sm, err = metadata.Open(r.sm)
	return sm, true, err
}

// check returns what the raft log holds when it can rebuild the store
// whose opening failed with damaged, and otherwise the member's refusal.
func (r storeRebuild) check(damaged error) (raftlog.LogState, error) {
	log, err := raftlog.ReadLogState(r.sm.Dir)
	if errors.Is(err, raftlog.ErrLocked) {
		return log, err
	}
	if err != nil {
		return log, refuseDamaged(fmt.Errorf("%w; the raft log cannot rebuild it: %w", damaged, err), "", r.member)
	}
	if !log.HasMembership {
		return log, refuseUnlogged(damaged, r.sm.Dir, r.member)
	}
	restored, rerr := metadata.RestoredFrom(r.sm.Dir)
	if log.Rebuilds(rerr == nil && restored == 0) {
		return log, nil
	}
	why := fmt.Sprintf("the raft log is compacted to index %d and holds no snapshot", log.CompactedIndex)
	if log.CompactedIndex == 0 {
		why = "the store was restored from a backup (or it cannot be read to tell), and the raft log holds no snapshot of the backup's state yet"
	}
	return log, refuseDamaged(damaged, why+": the raft log cannot rebuild it", r.member)
}

// moveAside renames path to path.damaged-<UTC time> (with a counter if
// that name is taken) and makes the rename durable. It returns the new
// name.
func moveAside(path string, now time.Time) (string, error) {
	aside := metadata.DamagedName(path, now)
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	return aside, durable.SyncDir(filepath.Dir(path))
}

// refuseDamaged is the error of a member whose data dir is damaged (err
// matches metadata.ErrDamaged, raftlog.ErrDamaged or
// raftlog.ErrBadSnapshotFile) beyond what it can repair by itself: why
// (if not in err already) and how to recover.
func refuseDamaged(err error, why string, cfg *Config) error {
	if why != "" {
		why = "; " + why
	}
	return fmt.Errorf("%w%s, so this data dir cannot be started. "+
		"If the other members are up, rebuild this one from them: move its data dir away, "+
		"`metalog cluster remove %s` and `metalog cluster add --name %s --peer-addr %s` (it gets a new id), then start it with --join; "+
		"a member alone in its cluster has no other copy: restore a backup into a new cluster "+
		"(`metalog backup restore BACKUP --data-dir NEW_DIR --name %s --initial-cluster ...`; keep backups: metalog backup save)",
		err, why, cfg.Name, cfg.Name, cfg.PeerAddr, cfg.Name)
}

// refuseUnlogged is the error of a member whose schema store is damaged
// (err) in a data dir without a raft log membership to rebuild it from: a
// store restored from a backup and never started, or a member that has
// not joined yet.
func refuseUnlogged(err error, dir string, cfg *Config) error {
	return fmt.Errorf("%w; %s holds no raft log to rebuild it from (a store restored from a backup, or a member that never started), "+
		"so this data dir cannot be started. Restore the backup again into a new data dir "+
		"(`metalog backup restore BACKUP --data-dir NEW_DIR --name %s --initial-cluster ...`), "+
		"or, for a member added to a running cluster, move the data dir away and start it again with --join",
		err, dir, cfg.Name)
}
