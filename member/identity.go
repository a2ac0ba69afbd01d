package member

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// A cluster's epochs number the changes of one history. Epoch numbers may
// be reused for other changes: a restore from a backup (RestoreDataDir)
// makes new epochs after the backup's, a forced new cluster
// (--force-new-cluster) keeps entries the old cluster may never have
// committed and numbers on from there, and a cluster restored from the
// same backup twice, or bootstrapped twice from empty data dirs with the
// same --initial-cluster, numbers its changes from the same epochs as the
// first. The history id names the history, so that a consumer that
// resumes with the id it saw learns that its epochs no longer mean what
// it thinks (HistoryChangedError) instead of being answered from another
// history.
//
// A cluster begun by this version (a bootstrap, a restore, a forced new
// cluster) names its history itself, through the log: its data dirs
// record that they began a new history (raftlog.NamingBegun), and such a
// member, once it leads and has applied the entries of its term's start,
// proposes a name when it finds none for its cluster id in the applied
// state, a random nonce (historyNamer, metadata.KindNameHistory); the
// first applied wins. The history id is made from the cluster id and that
// nonce (HistoryID), so it is the same on every member (the name is
// replicated, in snapshots and backups too), through restarts and joins,
// and new for every bootstrap, restore and forcing: each starts without a
// name for its cluster id (a restored or forced cluster gets a new
// cluster id, and the name it carries from before is the old id's). Until
// the name applies (the moments after a start, or longer without a
// leader) a member's history id is 0, shown as "", and it answers a watch
// or history read that names a history id with Unavailable
// (ErrHistoryUnnamed): it cannot tell yet whether the epochs asked for
// are its own. A member that joins such a cluster learns it from the
// member it joins (ListMembers' history_named), records that it expects
// a name (raftlog.NamingExpected) and waits for it.
//
// A cluster begun before (its data dirs record no naming) never names its
// history: members of the older version would skip the name's entry, and,
// once upgraded, hold no name while the others do. Its history id is
// HistoryID(cluster, 0), derived from the cluster id alone as the older
// versions derive it, the same on every member whatever its version, so
// that a rolling upgrade changes no history id.

// Identity names a member's cluster and the history its epochs count.
type Identity struct {
	// ClusterID is the id of the member's cluster, 0 for a cluster
	// bootstrapped before clusters had ids.
	ClusterID uint64
	// HistoryID is HistoryID(ClusterID, nonce) once the cluster has named
	// its history with nonce, 0 before; HistoryID(ClusterID, 0) for a
	// cluster that does not name its history (one begun before history
	// names).
	HistoryID uint64
}

// IdentityOf returns the identity of a member of cluster whose applied
// state holds the history name name and whose data dir records naming:
// the named history's id when name names cluster's history; none while a
// cluster that names its history has not named it yet (naming is
// raftlog.NamingBegun or raftlog.NamingExpected, or name is another
// cluster id's: a restored or forced named history, which only a cluster
// begun by this version holds); the derived id HistoryID(cluster, 0) for
// a cluster that does not name its history.
func IdentityOf(cluster uint64, name metadata.HistoryName, naming raftlog.HistoryNaming) Identity {
	switch {
	case name.Names(cluster):
		return Identity{ClusterID: cluster, HistoryID: HistoryID(cluster, name.Nonce)}
	case namesHistory(naming, name):
		return Identity{ClusterID: cluster}
	}
	return Identity{ClusterID: cluster, HistoryID: HistoryID(cluster, 0)}
}

// HistoryID is the history id of the cluster with id cluster whose
// history is named nonce: the first 8 bytes of a SHA-256 of both (1 if
// they are 0), so that it is never 0 (0 means "not known" in a request,
// and "not named yet" in an Identity). Nonce 0 is a cluster that does
// not name its history: its id is made from the cluster id alone, the
// same bytes as versions before history names hashed, so that it stays
// what they answered.
func HistoryID(cluster, nonce uint64) uint64 {
	b := binary.BigEndian.AppendUint64([]byte("metalog history\n"), cluster)
	if nonce != 0 {
		b = binary.BigEndian.AppendUint64(b, nonce)
	}
	sum := sha256.Sum256(b)
	if id := binary.BigEndian.Uint64(sum[:8]); id != 0 {
		return id
	}
	return 1
}

// FormatHistoryID is how history ids appear on the wire and to users:
// FormatID's form; 0 (not named yet) is "".
func FormatHistoryID(id uint64) string { return optionalID(id) }

// optionalID is an id that may be absent (a history not named yet, a
// cluster id or leader not known) as members report it: FormatID's form,
// "" for 0.
func optionalID(id uint64) string {
	if id == 0 {
		return ""
	}
	return FormatID(id)
}

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
		cluster = raftlog.FormatID(e.Identity.ClusterID)
	}
	return fmt.Sprintf("%s: history id %s is not this cluster's: cluster %s counts its epochs in history %s. "+
		"The cluster was bootstrapped again, restored from a backup or forced into a new cluster (--force-new-cluster) since that history id was seen, "+
		"so its epoch numbers may name other changes: read the schema again and follow from its epoch with history id %s",
		e.Op, FormatHistoryID(e.Requested), cluster, FormatHistoryID(e.Identity.HistoryID), FormatHistoryID(e.Identity.HistoryID))
}

// Is matches ErrHistoryChanged.
func (e *HistoryChangedError) Is(target error) bool { return target == ErrHistoryChanged }

// ErrHistoryUnnamed is matched (errors.Is) by the error of a watch or
// history read that names a history id while the member's cluster has
// not named its history yet: the member cannot tell whether the epochs
// asked for are its own, so it answers with none. Its code is
// Unavailable: the name applies moments later, and the request is tried
// again.
var ErrHistoryUnnamed = errors.New("the cluster has not named its history yet")

// checkHistory refuses a request of op that names a history id (not 0)
// other than id's, or any while id has none.
func checkHistory(op string, requested uint64, id Identity) error {
	switch {
	case requested == 0 || requested == id.HistoryID:
		return nil
	case id.HistoryID == 0:
		return fmt.Errorf("%s: history id %s: %w; try again: its leader names it once elected, moments after a bootstrap, a restore or a forced new cluster (a member that joined waits for the name to reach it)",
			op, FormatHistoryID(requested), ErrHistoryUnnamed)
	}
	return &HistoryChangedError{Op: op, Requested: requested, Identity: id}
}
