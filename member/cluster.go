package member

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/internal/connfail"
	"github.com/metalog/metalog/member/internal/peerrpc"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// statusTimeout bounds the NodeStatus call to each member in ListMembers.
const statusTimeout = 2 * time.Second

// statusCatchUp bounds how long a member asked for its status at an
// epoch it has not applied yet waits for it (ListMembersAt).
const statusCatchUp = 100 * time.Millisecond

// Cluster is a member's service of the cluster's membership: who the
// members are and their status (ListMembers), the agreement check
// (CheckCluster), and adding, removing and repairing one. It works on the
// member's core: its raft node for the configuration, its transport and
// peer credentials to ask the other members. Get it with Member.Cluster;
// its methods are safe for concurrent use.
type Cluster struct {
	c *core
}

// ListMembers lists the members and asks each, in parallel and in one
// round, for its own status (term, indexes, epoch, digest and its recent
// history). A member that cannot be reached has its Error set.
func (cl *Cluster) ListMembers(ctx context.Context) (*ClusterStatus, error) {
	resp := cl.membersAt(ctx, 0, false)
	resp.HistoryNamed = namesHistory(cl.c.node.HistoryNaming(), cl.c.sm.Current().History)
	for _, f := range cl.c.node.Forcings() {
		resp.Forcings = append(resp.Forcings, ClusterForcing{From: raftlog.FormatID(f.From), To: raftlog.FormatID(f.To), Index: f.Index, By: FormatID(f.By)})
	}
	markOtherConfigurations(resp.Members, FormatID(cl.c.id))
	return resp, nil
}

// BriefMembersAt lists the members as ListMembers does, but each that
// answers does so briefly (its addresses, indexes, epoch and digest: no
// history, alarms or configuration, so that nothing is checked against
// them) and once it has applied epoch, or after statusCatchUp as it is
// then. The CQL listener asks at its own epoch when a driver reads
// system.peers to wait for schema agreement after a change, when the
// others have it committed but may not have applied it yet; a leader
// that is asked (or asks) at an epoch first sends the followers the
// commit index it holds back (raftlog.Node.ReleaseCommitUpdates), which
// they would otherwise learn up to the hold's 2 ms later.
func (cl *Cluster) BriefMembersAt(ctx context.Context, epoch uint64) (*ClusterStatus, error) {
	cl.c.releaseCommitUpdates(epoch)
	return cl.membersAt(ctx, epoch, true), nil
}

// membersAt lists the members, each with the status it gave when asked at
// epoch, briefly or not: the round of status calls of ListMembers and
// BriefMembersAt, over the kept connections (statusConns).
func (cl *Cluster) membersAt(ctx context.Context, epoch uint64, brief bool) *ClusterStatus {
	st := cl.c.node.Status()
	members := cl.c.node.Members()
	resp := &ClusterStatus{Term: st.Term, Members: make([]*MemberStatus, len(members))}
	if st.Leader != 0 {
		resp.Leader = FormatID(st.Leader)
	}
	if id := cl.c.node.ClusterID(); id != 0 {
		resp.ClusterID = raftlog.FormatID(id)
	}
	others := make(map[uint64]string, len(members))
	for _, rm := range members {
		if info, err := parseMemberInfo(rm.Context); err == nil && rm.ID != cl.c.id {
			others[rm.ID] = info.PeerAddr
		}
	}
	cl.c.statusConns.keepOnly(others)
	req := &peerrpc.NodeStatusRequest{MinEpoch: epoch, Brief: brief}
	answers := askStatusesWith(cl.c.peerContext(ctx), others, func(ctx context.Context, addr string) (*MemberStatus, error) {
		return cl.c.statusConns.ask(ctx, addr, req)
	})
	for i, rm := range members {
		info, err := parseMemberInfo(rm.Context)
		pm := &MemberStatus{ID: FormatID(rm.ID), Name: info.Name, PeerAddr: info.PeerAddr, Role: roleOf(rm), Leader: rm.ID == st.Leader}
		resp.Members[i] = pm
		switch a := answers[rm.ID]; {
		case err != nil:
			pm.Error = err.Error()
		case rm.ID == cl.c.id:
			fillStatus(pm, cl.c.ownStatus(brief))
		case a.err != nil:
			cl.refusedStatus(pm, a.err)
		default:
			fillStatus(pm, a.status)
		}
	}
	slices.SortFunc(resp.Members, func(a, b *MemberStatus) int { return strings.Compare(a.Name, b.Name) })
	cl.c.statusCalls.Add(float64(len(others))) // the calls made: none for a member not yet in its configuration
	return resp
}

// markOtherConfigurations sets the Error of every member that answered
// with another configuration (members or roles) than this member's, self:
// the two do not see the same cluster.
func markOtherConfigurations(members []*MemberStatus, self string) {
	var mine *MemberStatus
	for _, pm := range members {
		if pm.ID == self {
			mine = pm
		}
	}
	for _, pm := range members {
		if d := configDiff(mine, pm); pm.Reachable && d != "" {
			pm.Error = "other members: " + d
		}
	}
}

// refusedStatus fills in why member pm did not answer its status call
// with err: it answers for another cluster (its id in pm.ClusterID), its
// log was forced from this member's cluster (this member then stops: its
// cluster was forced into a new one), or it could not be reached (why in a
// few words, "connection refused", "timeout", not gRPC's transport text).
func (cl *Cluster) refusedStatus(pm *MemberStatus, err error) {
	local := raftlog.FormatID(cl.c.node.ClusterID())
	if f, ok := raftlog.ForcingOf(err); ok {
		pm.ClusterID = raftlog.FormatID(f.To)
		pm.Error = fmt.Sprintf("answers for cluster %s, which it made out of this cluster (%s) with --force-new-cluster at index %d: this member stops", pm.ClusterID, local, f.Index)
		cl.c.node.ReportForeign(&raftlog.ForcedError{Forcing: f, ByName: pm.Name})
		return
	}
	if other, ok := raftlog.MismatchOf(err); ok {
		pm.ClusterID = raftlog.FormatID(other)
		pm.Error = fmt.Sprintf("answers for cluster %s, not %s", pm.ClusterID, local)
		return
	}
	_, pm.Error = connfail.Of(err)
}

// fillStatus copies what member pm reported of itself, got, into pm.
func fillStatus(pm, got *MemberStatus) {
	pm.GRPCAddr, pm.HTTPAddr, pm.CQLAddr = got.GRPCAddr, got.HTTPAddr, got.CQLAddr
	pm.Reachable = true
	pm.Term, pm.CommitIndex, pm.AppliedIndex = got.Term, got.CommitIndex, got.AppliedIndex
	pm.Epoch, pm.Digest = got.Epoch, got.Digest
	pm.History = got.History
	pm.Alarms = got.Alarms
	pm.ClusterID, pm.Configuration, pm.KnownLeader = got.ClusterID, got.Configuration, got.KnownLeader
}

// askStatus calls PeerService.NodeStatus on a member's peer address. Its
// error is the call's own (raftlog.ForcingOf, raftlog.MismatchOf and
// connfail.Of read it).
func askStatus(ctx context.Context, creds grpc.DialOption, peerAddr string) (*MemberStatus, error) {
	got, err := peerrpc.NodeStatus(ctx, creds, peerAddr, 0, statusTimeout)
	if err != nil {
		return nil, err
	}
	return fromPeerMember(got), nil
}

// statusAnswer is one member's answer to a status call: its status, or
// why it gave none.
type statusAnswer struct {
	status *MemberStatus
	err    error
}

// askStatuses asks every member of peers (by id, its peer address) for its
// status, all at once (askStatus: each call within statusTimeout, all
// within ctx, which carries the cluster id they check), and returns their
// answers by id: the one round of status calls of cluster status and
// check, the strict reconfiguration check, the --force-new-cluster guard
// and the prober of a member without a leader.
func askStatuses(ctx context.Context, creds grpc.DialOption, peers map[uint64]string) map[uint64]statusAnswer {
	return askStatusesWith(ctx, peers, func(ctx context.Context, addr string) (*MemberStatus, error) {
		return askStatus(ctx, creds, addr)
	})
}

// askStatusesWith is askStatuses with each member asked by ask.
func askStatusesWith(ctx context.Context, peers map[uint64]string, ask func(ctx context.Context, addr string) (*MemberStatus, error)) map[uint64]statusAnswer {
	answers := make(map[uint64]statusAnswer, len(peers))
	var mu sync.Mutex // guards answers
	var wg sync.WaitGroup
	for id, addr := range peers {
		wg.Go(func() {
			got, err := ask(ctx, addr)
			mu.Lock()
			answers[id] = statusAnswer{status: got, err: err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return answers
}

// selfStatus is this member's own status, as PeerService.NodeStatus reports it.
func (c *core) selfStatus() *MemberStatus { return c.ownStatus(false) }

// ownStatus is this member's own status; brief, without its history,
// alarms and configuration (BriefMembersAt).
func (c *core) ownStatus(brief bool) *MemberStatus {
	st := c.node.Status()
	md := c.sm.Current()
	d := md.Schema.Digest()
	self := &MemberStatus{
		ID:           FormatID(c.id),
		Name:         c.name,
		PeerAddr:     c.peerAddr,
		GRPCAddr:     c.grpcAddr,
		HTTPAddr:     c.httpAddr,
		CQLAddr:      c.cqlAddr,
		Leader:       st.Leader == c.id,
		Reachable:    true,
		Term:         st.Term,
		CommitIndex:  st.Commit,
		AppliedIndex: st.Applied,
		Epoch:        md.Epoch,
		Digest:       hex.EncodeToString(d[:]),
		ClusterID:    optionalID(c.node.ClusterID()),
		KnownLeader:  optionalID(st.Leader),
	}
	if brief {
		return self
	}
	self.History = digestHistory(c.sm.RecentDigests())
	self.Alarms = c.space.alarms()
	for _, p := range c.node.Members() {
		info, _ := parseMemberInfo(p.Context)
		self.Configuration = append(self.Configuration, ConfigMember{ID: FormatID(p.ID), Name: info.Name, Role: roleOf(p), PeerAddr: info.PeerAddr})
	}
	return self
}

// releaseCommitUpdates has this member, if it leads, send its followers
// the commit index it holds back, when a status is asked at epoch (not
// 0): someone waits for the followers to apply it.
func (c *core) releaseCommitUpdates(epoch uint64) {
	if epoch > 0 && c.node.Status().Leader == c.id {
		c.node.ReleaseCommitUpdates()
	}
}

func digestHistory(h []metadata.EpochDigest) []EpochDigest {
	out := make([]EpochDigest, len(h))
	for i, e := range h {
		out[i] = EpochDigest{Epoch: e.Epoch, Digest: hex.EncodeToString(e.Digest[:])}
	}
	return out
}

// AddMember adds a member as a learner, under name with its peer address;
// the leader promotes it to voter once it has caught up and answers, or,
// for an observer, never: an observer receives the log and snapshots,
// serves reads and feeds, and forwards writes, but never votes nor counts
// toward a quorum. The member gets an id this cluster never used
// (newMemberID), also when name is a removed member's: the removed
// member's data dir, if started again, is told it was removed and never
// passes for the new member.
func (cl *Cluster) AddMember(ctx context.Context, name, addr string, observer bool) (*MemberStatus, error) {
	if err := checkMemberName(name); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, argumentError("peer_addr", "add member %s: peer_addr %q: %v", name, addr, err)
	}
	members := cl.c.node.Members()
	for _, rm := range members {
		info, _ := parseMemberInfo(rm.Context)
		if info.Name == name || info.PeerAddr == addr {
			return nil, &MemberExistsError{Name: name, PeerAddr: addr, Member: info.Name, ID: rm.ID, MemberPeerAddr: info.PeerAddr}
		}
	}
	ctx, cancel := withTimeout(ctx, cl.c.timeout)
	defer cancel()
	if err := cl.checkReconfig(ctx, "add member "+name, 0); err != nil {
		return nil, err
	}
	id := cl.newMemberID(name, addr, members)
	info := memberInfo{Name: name, PeerAddr: addr, Observer: observer}
	if err := cl.c.node.AddLearner(ctx, id, info.marshal()); err != nil {
		return nil, membershipError("add member "+name, err)
	}
	role := roleOf(raftlog.Peer{ID: id, Context: info.marshal(), Learner: true})
	cl.c.logger.Info("member added as "+role, "name", name, "id", FormatID(id), "peer", addr)
	return &MemberStatus{ID: FormatID(id), Name: name, PeerAddr: addr, Role: role}, nil
}

// newMemberID chooses the id of a member added under name at addr: a hash
// of the cluster's id, the name, the address, this member's applied index
// and the time, so that it differs from every id the cluster used, past
// or present, and from the id an earlier member of the same name had.
// One that is in use (members) or that this member knows was removed is
// drawn again; the chance of that is about one in 2^64.
func (cl *Cluster) newMemberID(name, addr string, members []raftlog.Peer) uint64 {
	applied := cl.c.node.Status().Applied
	for attempt := 0; ; attempt++ {
		h := sha256.Sum256(fmt.Appendf(nil, "%x\n%s\n%s\n%d\n%d\n%d", cl.c.node.ClusterID(), name, addr, applied, time.Now().UnixNano(), attempt))
		id := binary.BigEndian.Uint64(h[:8])
		used := id == 0 || slices.ContainsFunc(members, func(p raftlog.Peer) bool { return p.ID == id })
		if at, _ := cl.c.node.PeerRemoved(id); !used && at == 0 {
			return id
		}
	}
}

// ID is this member's raft id: ID(Name) for a founding member, the one the
// cluster gave it for a member added later; its data dir records it.

// checkMemberName checks the name of a member to add against the name rule
// (access.CheckName), which serve checks for --name: a member added under
// a name it could not be started with would never join.
func checkMemberName(name string) error {
	if err := access.CheckName(name); err != nil {
		return &ArgumentError{Field: "name", Msg: fmt.Sprintf("add member: %v; nothing was added", err), Err: err}
	}
	return nil
}

// RemoveMember removes the member named by want, a name or a hex id. The
// removed member stops; removing the leader works (it steps down). A
// removal that would leave fewer reachable voters than a quorum is refused
// before it is proposed (checkReconfig).
func (cl *Cluster) RemoveMember(ctx context.Context, want string) error {
	found, info, _, ok := cl.find(want)
	if !ok {
		return &MemberNotFoundError{Op: "remove member", Want: want}
	}
	ctx, cancel := withTimeout(ctx, cl.c.timeout)
	defer cancel()
	if err := cl.checkReconfig(ctx, "remove member "+cmp.Or(info.Name, want), found.ID); err != nil {
		return err
	}
	if err := cl.c.node.RemoveMember(ctx, found.ID); err != nil {
		if errors.Is(err, raftlog.ErrConfChangeRefused) {
			return &PreconditionError{Msg: fmt.Sprintf("remove member %s: %v", info.Name, err), Err: err}
		}
		return membershipError("remove member "+info.Name, err)
	}
	cl.c.logger.Info("member removed", "name", info.Name, "id", FormatID(found.ID))
	return nil
}

// find returns the member whose name or hex id is want, with what its
// context records (infoErr when that does not decode).
func (cl *Cluster) find(want string) (found raftlog.Peer, info memberInfo, infoErr error, ok bool) {
	id, isID := parseID(want)
	for _, rm := range cl.c.node.Members() {
		mi, err := parseMemberInfo(rm.Context)
		if (isID && id == rm.ID) || (err == nil && mi.Name == want) {
			return rm, mi, err, true
		}
	}
	return raftlog.Peer{}, memberInfo{}, nil, false
}
