package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/metalog/metalog/raftlog"
)

// forceGuardTimeout bounds the one round of status calls --force-new-cluster
// makes before it rewrites anything: members that do not answer within it
// count as lost.
const forceGuardTimeout = 2 * time.Second

// ErrForceRefused is matched (errors.Is) by the error of Start when
// --force-new-cluster found a quorum of its cluster alive: forcing would
// leave two clusters, so nothing was changed.
var ErrForceRefused = errors.New("--force-new-cluster refused")

// answer is one member that answered the guard's status call.
type answer struct {
	id    uint64
	name  string
	addr  string
	voter bool
}

// planForce decides whether Config.ForceNewCluster forces the log of dd
// (the data dir as Inspect read it) into a new cluster; self is this
// member's raft id, as the data dir knows it. A member alone
// already is not forced again: a restart with the flag still given only
// warns. Otherwise it first asks every other member the data dir knows,
// over the peer port, for its status, in one parallel round bounded by
// forceGuardTimeout: when the members of its cluster that answer make,
// with this one, a quorum of the voters, the cluster is alive and it
// refuses (ErrForceRefused) naming them; fewer are named in a WARN, as
// members that will be refused as another cluster's once it is forced.
func (c *core) planForce(dd raftlog.DataDir, self uint64, dir string) (bool, error) {
	var others []uint64
	for _, id := range append(slices.Clone(dd.Voters), dd.Learners...) {
		if id != self {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		if n := len(dd.Forcings); n > 0 {
			f := dd.Forcings[n-1]
			c.logger.Warn(fmt.Sprintf("--force-new-cluster: already forced at index %d; not forcing again; start without the flag", f.Index),
				"cluster", raftlog.FormatID(f.To), "forced_from", raftlog.FormatID(f.From), "data_dir", dir)
		} else {
			c.logger.Warn("--force-new-cluster: this member is its cluster's only member already; not forcing; start it without the flag", "data_dir", dir)
		}
		return false, nil
	}
	answered := c.askOthers(dd, others)
	votes := 0
	if slices.Contains(dd.Voters, self) {
		votes++
	}
	for _, a := range answered {
		if a.voter {
			votes++
		}
	}
	quorum := len(dd.Voters)/2 + 1
	switch {
	case len(answered) > 0 && votes >= quorum:
		return false, fmt.Errorf("%w: %s of cluster %s answered, and with this member they make a quorum (%d of %d voters): the cluster is alive, and forcing this member would split it in two. "+
			"Stop them first (for good) if this member is to go on alone, or start this member without --force-new-cluster to rejoin them; nothing in %s was changed",
			ErrForceRefused, describeAnswers(answered), raftlog.FormatID(dd.ClusterID), votes, len(dd.Voters), dir)
	case len(answered) > 0:
		c.logger.Warn("--force-new-cluster: some members of the cluster answered, fewer than a quorum with this one; forcing anyway. "+
			"Once forced, they are refused as members of another cluster and stop: stop them now, and do not start them again",
			"answered", describeAnswers(answered), "voters", len(dd.Voters))
	}
	return true, nil
}

// askOthers asks members ids of dd's cluster, at the peer addresses dd
// records, for their status in parallel, and returns those that answered
// for the same cluster, sorted by name.
func (c *core) askOthers(dd raftlog.DataDir, ids []uint64) []answer {
	ctx, cancel := context.WithTimeout(context.Background(), forceGuardTimeout)
	defer cancel()
	// Without peer TLS the others believe the member the call names.
	ctx = metadata.AppendToOutgoingContext(ctx, raftlog.PeerMemberNameKey, c.name)
	if dd.MemberID != 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, raftlog.PeerMemberIDKey, FormatID(dd.MemberID))
	}
	if dd.ClusterID != 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, peerClusterKey, raftlog.FormatID(dd.ClusterID))
	}
	others := make(map[uint64]string, len(ids))
	infos := make(map[uint64]memberInfo, len(ids))
	for _, id := range ids {
		info, err := parseMemberInfo(dd.Members[id])
		if err != nil || info.PeerAddr == "" {
			c.logger.Warn("--force-new-cluster: a member without a known peer address cannot be asked", "id", FormatID(id))
			continue
		}
		others[id], infos[id] = info.PeerAddr, info
	}
	var answered []answer
	for id, a := range askStatuses(ctx, c.peerDial, others) {
		if a.err == nil && sameCluster(a.status, id, dd.ClusterID) {
			answered = append(answered, answer{id: id, name: infos[id].Name, addr: others[id], voter: slices.Contains(dd.Voters, id)})
		}
	}
	slices.SortFunc(answered, func(a, b answer) int { return strings.Compare(a.name, b.name) })
	return answered
}

// sameCluster reports whether status got answers for member id of
// cluster: a member of an earlier release reports no cluster id, and is
// taken for a member of it.
func sameCluster(got *MemberStatus, id, cluster uint64) bool {
	if got.ID != FormatID(id) {
		return false
	}
	return got.ClusterID == "" || cluster == 0 || got.ClusterID == raftlog.FormatID(cluster)
}

// describeAnswers names the members that answered: "members n2
// (127.0.0.1:7271) and n3 (127.0.0.1:7371)".
func describeAnswers(as []answer) string {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = fmt.Sprintf("%s (%s)", a.name, a.addr)
	}
	word := "member "
	if len(as) > 1 {
		word = "members "
	}
	if len(names) <= 1 {
		return word + strings.Join(names, "")
	}
	return word + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
