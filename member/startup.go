package member

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// startup is how a member begins, decided from its data dir before
// anything is written to it.
type startup struct {
	dir raftlog.DataDir
	// join says the member joins a running cluster: its data dir holds no
	// membership yet and Config.Join is set (a new member, or a join that
	// did not complete). It never bootstraps a cluster of its own then.
	join bool
	// joinPeers are the members the join target listed, for the
	// transport to reach them.
	joinPeers []*pb.Member
	// clusterID is the id the raft log gets (a new or unfinished log), 0
	// for a log that has one already.
	clusterID uint64
	// id is the member's raft id: the one its data dir records; for a
	// join, the one the cluster gave it when it was added (the join
	// target lists it); for a founding member, or a data dir written
	// before ids were recorded, ID(Name).
	id uint64
	// force says Config.ForceNewCluster forces the log into a new cluster
	// (planForce): false when the member is alone already, or when the
	// flag is not given.
	force bool
	// named says, for a join, that the join target's cluster names its
	// history through its log (ListMembers' history_named): the member
	// waits for the name instead of answering the id derived from the
	// cluster id.
	named bool
	// rebuilt says the schema store was found damaged and moved aside
	// (storeRebuild): the raft log restores the new one from its newest
	// snapshot.
	rebuilt bool
}

// naming is what a new log records about naming its history
// (raftlog.Config.Naming): a join expects a name when its cluster names
// its history, and otherwise records none; a bootstrap (a new cluster, or
// one restored from a backup) begins a new history, unless legacy says to
// bootstrap as versions before history names did (tests of an upgrade).
// A restart and a forcing ignore it (the log recorded its naming; a
// forcing records its own).
func (s startup) naming(legacy bool) raftlog.HistoryNaming {
	switch {
	case s.join && s.named:
		return raftlog.NamingExpected
	case s.join || legacy:
		return raftlog.NamingNone
	}
	return raftlog.NamingBegun
}

// planStartup reads the data dir and decides how the member starts. A
// member that joins asks the join target for the cluster's members and id
// first, before its peer address is bound: the running members ask every
// member for its status while answering, and a bound listener nobody
// serves yet would hold that call until its timeout. Its peer address is
// checked free before that, so that a clash fails before anything is
// written.
func (m *Member) planStartup() (startup, error) {
	c := m.core
	dd, err := raftlog.Inspect(c.cfg.DataDir)
	if errors.Is(err, raftlog.ErrDamaged) {
		return startup{}, refuseDamaged(err, "nothing else on this member holds its raft log", &c.cfg)
	}
	if err != nil {
		return startup{}, err
	}
	s := startup{dir: dd, join: c.cfg.Join != "" && !dd.HasMembership, id: dd.MemberID}
	if s.id == 0 {
		s.id = ID(c.cfg.Name)
	}
	switch {
	case dd.ForcedAway:
		return s, &raftlog.ForcedError{Forcing: dd.ForcedAwayBy, Dir: c.cfg.DataDir}
	case c.cfg.ForceNewCluster && (!dd.HasMembership || c.cfg.Join != ""):
		return s, fmt.Errorf("--force-new-cluster needs the data dir of a member of a cluster, and no --join: %s holds no cluster membership", c.cfg.DataDir)
	case c.cfg.ForceNewCluster:
		s.force, err = c.planForce(dd, s.id, c.cfg.DataDir)
		return s, err
	case dd.Origin == raftlog.OriginJoin && !dd.HasMembership && c.cfg.Join == "":
		return s, fmt.Errorf("%w: %s was begun to join cluster %s and never received its membership: start the member again with --join to resume the join, or delete %s to start over",
			raftlog.ErrJoinIncomplete, c.cfg.DataDir, raftlog.FormatID(dd.ClusterID), c.cfg.DataDir)
	case s.join:
		if err := checkFree(c.cfg.PeerAddr); err != nil {
			return s, err
		}
		var added uint64
		if s.joinPeers, s.clusterID, added, s.named, err = c.fetchMembers(c.cfg.Join); err != nil {
			return s, err
		}
		if dd.MemberID != 0 && dd.MemberID != added {
			return s, fmt.Errorf("%w: %s was begun to join as member %s, but %s lists %s as member %s now (removed and added again?): delete %s to join as the member the cluster lists",
				raftlog.ErrMemberIDMismatch, c.cfg.DataDir, FormatID(dd.MemberID), c.cfg.Join, c.cfg.Name, FormatID(added), c.cfg.DataDir)
		}
		s.id = added
		if dd.ClusterID != 0 && s.clusterID != 0 && dd.ClusterID != s.clusterID {
			return s, fmt.Errorf("%w: %s was begun to join cluster %s, but %s belongs to cluster %s: delete %s to join this one",
				raftlog.ErrClusterMismatch, c.cfg.DataDir, raftlog.FormatID(dd.ClusterID), c.cfg.Join, raftlog.FormatID(s.clusterID), c.cfg.DataDir)
		}
	case !dd.HasMembership:
		// A new cluster, or a bootstrap that stopped before its first
		// write: the same founding members (and backup) give the same id.
		restored, err := metadata.RestoredFrom(c.cfg.DataDir)
		if errors.Is(err, metadata.ErrDamaged) {
			return s, refuseUnlogged(err, c.cfg.DataDir, &c.cfg)
		}
		if err != nil {
			return s, err
		}
		s.clusterID = clusterIDOf(c.cfg.initialCluster(), restored)
	}
	return s, nil
}

// warnIgnored says, for a data dir that holds its membership, that
// InitialCluster and Join do not apply, and what the dir holds.
func (m *Member) warnIgnored(s startup) {
	c := m.core
	if !s.dir.HasMembership || (c.cfg.Join == "" && len(c.cfg.InitialCluster) == 0) {
		return
	}
	var names []string
	for _, p := range c.node.Members() {
		info, _ := parseMemberInfo(p.Context)
		names = append(names, info.Name)
	}
	c.logger.Warn("--initial-cluster and --join are read only when the data dir is new; they are ignored",
		"data_dir", c.cfg.DataDir, "cluster", raftlog.FormatID(c.node.ClusterID()), "members", strings.Join(names, ","))
}

// checkFree reports whether addr can be bound now.
func checkFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("peer listener: %w", err)
	}
	return l.Close()
}

// clusterIDOf is the id of a cluster bootstrapped with these founding
// members, from the backup restoredFrom when not 0 (metadata.RestoreBackup):
// every founding member computes the same from the same --initial-cluster
// and backup, and two clusters with different members or addresses, or a
// cluster and one restored from its backup, get different ids.
func clusterIDOf(members []InitialMember, restoredFrom uint64) uint64 {
	lines := make([]string, len(members))
	for i, im := range members {
		lines[i] = im.Name + "=" + im.PeerAddr
	}
	slices.Sort(lines)
	if restoredFrom != 0 {
		lines = append(lines, fmt.Sprintf("restored from backup %016x", restoredFrom))
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	if id := binary.BigEndian.Uint64(sum[:8]); id != 0 {
		return id
	}
	return 1
}

// mkdirDataDir creates the data dir, once every listener is bound.
func mkdirDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}
