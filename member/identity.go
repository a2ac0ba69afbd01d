package member

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/metalog/metalog/raftlog"
)

// A cluster's epochs number the changes of one history. A restore from a
// backup (RestoreDataDir) and a forced new cluster (--force-new-cluster)
// start a history that shares only a prefix with the one before it: the
// restored cluster makes new epochs after the backup's, the forced one
// keeps entries the old cluster may never have committed, and both go on
// numbering from there, so epoch N may name different changes on either
// side. The history id names the history, so that a consumer that resumes
// with the id it saw learns that its epochs no longer mean what it
// thinks (HistoryChangedError) instead of being answered from another
// history.
//
// Both events give the cluster a new id (clusterIDOf, from the backup;
// raftlog.ForcedClusterID, from the forcing), which every member records
// in its raft.db: a founding member computes it, a joining member takes
// it from the member it joins (after a forcing too: the forced member
// leads the new cluster). So the history id is derived from the cluster
// id alone: every member of a cluster reports the same, through restarts
// and joins, without anything in the replicated metadata. A cluster
// bootstrapped before clusters had ids has cluster id 0, and its history
// id is HistoryID(0), the same for all of them; forcing or restoring one
// gives it an id, and so a new history id.

// Identity names a member's cluster and the history its epochs count.
type Identity struct {
	// ClusterID is the id of the member's cluster, 0 for a cluster
	// bootstrapped before clusters had ids.
	ClusterID uint64
	// HistoryID is HistoryID(ClusterID), never 0.
	HistoryID uint64
}

// IdentityOf returns the identity of a member of cluster.
func IdentityOf(cluster uint64) Identity {
	return Identity{ClusterID: cluster, HistoryID: HistoryID(cluster)}
}

// HistoryID is the history id of the cluster with id cluster: the first 8
// bytes of a SHA-256 of it (1 if they are 0), so that it is never 0 (0
// means "not known" in a request) and differs from the cluster id it is
// made from (the two name different things, and may one day be made
// differently).
func HistoryID(cluster uint64) uint64 {
	b := binary.BigEndian.AppendUint64([]byte("metalog history\n"), cluster)
	sum := sha256.Sum256(b)
	if id := binary.BigEndian.Uint64(sum[:8]); id != 0 {
		return id
	}
	return 1
}

// FormatHistoryID is how history ids appear on the wire and to users:
// lowercase hex without padding, like cluster ids.
func FormatHistoryID(id uint64) string { return strconv.FormatUint(id, 16) }

// FormatClusterID is how cluster ids appear on the wire and to users
// (raftlog.FormatClusterID), for the layers above the member.
func FormatClusterID(id uint64) string { return raftlog.FormatClusterID(id) }

// ParseHistoryID reads a history id in FormatHistoryID's form; "" is 0
// (not known).
func ParseHistoryID(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseUint(s, 16, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("history id %.40q: want the history_id of a response (up to 16 hex digits, not 0)", s)
	}
	return id, nil
}

// ErrHistoryChanged is matched (errors.Is) by a *HistoryChangedError.
var ErrHistoryChanged = errors.New("member: the history id named is not this cluster's")

// HistoryChangedError refuses a watch or history read that names a
// history id other than the member's: its epochs may name other changes.
// Its code is FailedPrecondition.
type HistoryChangedError struct {
	// Op is what was refused: "watch" or "history".
	Op string
	// Requested is the history id the request named.
	Requested uint64
	// Identity is the member's.
	Identity Identity
}

// Error names both history ids, why they differ and what to do.
func (e *HistoryChangedError) Error() string {
	cluster := "(no id)"
	if e.Identity.ClusterID != 0 {
		cluster = raftlog.FormatClusterID(e.Identity.ClusterID)
	}
	return fmt.Sprintf("%s: history id %s is not this cluster's: cluster %s counts its epochs in history %s. "+
		"The cluster was restored from a backup or forced into a new cluster (--force-new-cluster) since that history id was seen, "+
		"so its epoch numbers may name other changes: read the schema again and follow from its epoch with history id %s",
		e.Op, FormatHistoryID(e.Requested), cluster, FormatHistoryID(e.Identity.HistoryID), FormatHistoryID(e.Identity.HistoryID))
}

// Is matches ErrHistoryChanged.
func (e *HistoryChangedError) Is(target error) bool { return target == ErrHistoryChanged }

// checkHistory refuses a request of op that names a history id (not 0)
// other than id's.
func checkHistory(op string, requested uint64, id Identity) error {
	if requested == 0 || requested == id.HistoryID {
		return nil
	}
	return &HistoryChangedError{Op: op, Requested: requested, Identity: id}
}
