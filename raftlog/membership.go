package raftlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
)

// errConfChangePending is the loop's answer to a conf change proposed on
// the leader while an earlier one is not applied yet; the caller retries.
var errConfChangePending = errors.New("raftlog: a configuration change is pending")

// AddLearner adds member id, with its opaque context (name, address), as a
// learner: it receives the log but does not vote. It returns once the
// change is applied on this node. The leader promotes the learner to a
// voter on its own once it has caught up and answers (heard from within
// two heartbeat intervals), and only when the voters answering with it
// make a quorum of the grown voter set (Members and OnConfChange show
// it). Adding an id that is already a member does nothing and returns nil.
//
// Member ids are never reused: adding the id of a member this node knows
// was removed is refused with ErrIDRemoved before anything is proposed.
// (Logs of earlier releases may hold such a re-addition; they replay as
// they did.)
//
// Without a leader it waits for one until ctx ends, then returns an error
// wrapping ErrNoLeader and ctx.Err(). The change may still be applied after
// ctx ends.
func (n *Node) AddLearner(ctx context.Context, id uint64, context []byte) error {
	if id == 0 {
		return errors.New("raftlog: add learner: id must be non-zero")
	}
	if at, _ := n.PeerRemoved(id); at != 0 {
		return fmt.Errorf("raftlog: add learner %s: %w (at index %d)", FormatID(id), ErrIDRemoved, at)
	}
	err := n.changeConf(ctx, raftpb.ConfChangeAddLearnerNode, id, context, func(ms []Peer) bool {
		return slices.ContainsFunc(ms, func(m Peer) bool { return m.ID == id })
	})
	if err != nil {
		return fmt.Errorf("raftlog: add learner %d: %w", id, err)
	}
	return nil
}

// RemoveMember removes member id (voter or learner) and returns once the
// removal is applied on this node. Removing the leader works: it steps
// down when it applies its removal and the others elect a new leader. A
// node that applies its own removal stops (Err returns ErrRemoved; Done is
// closed). Removing an id that is not a member does nothing and returns
// nil; removing the only voter is refused with ErrConfChangeRefused.
//
// Errors on ctx and without a leader are as for AddLearner.
func (n *Node) RemoveMember(ctx context.Context, id uint64) error {
	if id == 0 {
		return errors.New("raftlog: remove member: id must be non-zero")
	}
	ms := n.Members()
	if i := slices.IndexFunc(ms, func(m Peer) bool { return m.ID == id }); i >= 0 && !ms[i].Learner {
		voters := 0
		for _, m := range ms {
			if !m.Learner {
				voters++
			}
		}
		if voters == 1 {
			return fmt.Errorf("raftlog: remove member %d: %w: it is the only voter", id, ErrConfChangeRefused)
		}
	}
	err := n.changeConf(ctx, raftpb.ConfChangeRemoveNode, id, nil, func(ms []Peer) bool {
		return !slices.ContainsFunc(ms, func(m Peer) bool { return m.ID == id })
	})
	if err != nil && !(id == n.id && errors.Is(err, ErrRemoved)) {
		return fmt.Errorf("raftlog: remove member %d: %w", id, err)
	}
	return nil
}

// changeConf proposes a single conf change and waits until this node has
// applied it. Raft may lose a conf change without telling anyone (a leader
// change, or a leader replacing it by an empty entry because another is
// pending), so the wait is bounded by a retry interval after which holds
// decides on the applied membership whether the change already holds;
// otherwise it is proposed again.
func (n *Node) changeConf(ctx context.Context, typ raftpb.ConfChangeType, id uint64, context []byte, holds func([]Peer) bool) error {
	_, err := n.proposeWait(ctx, nil, &confRequest{
		typ: typ, id: id, context: context, holds: holds,
		retryEvery: 2 * time.Duration(n.cfg.ElectionTicks) * n.cfg.TickInterval,
	})
	return err
}

// membership is the node goroutine's view of the cluster's members: who
// votes, who learns, their contexts, and the conf change in flight. It is
// owned by that goroutine; what other goroutines see of it is published
// (published.members and published.removedPeers).
type membership struct {
	self uint64
	pub  *published
	// ctx holds the contexts of the current members. A context is never
	// modified in place (a change stores a new slice), so a shallow copy
	// of the map is an immutable view.
	ctx              map[uint64][]byte
	voters, learners []uint64 // sorted; immutable once published
	pendingConf      uint64   // index of the last conf change appended
	removedSelf      bool     // this node applied its own removal
}

// setConf takes the voters and learners of cs.
func (m *membership) setConf(cs *raftpb.ConfState) {
	voters := slices.Clone(cs.GetVoters())
	slices.Sort(voters)
	learners := slices.Clone(cs.GetLearners())
	slices.Sort(learners)
	m.voters, m.learners = voters, learners
}

// noteAppended notes the conf changes among entries appended to the log.
func (m *membership) noteAppended(ents []*raftpb.Entry) {
	for _, e := range ents {
		if t := e.GetType(); t == raftpb.EntryConfChange || t == raftpb.EntryConfChangeV2 {
			m.pendingConf = e.GetIndex()
		}
	}
}

// publish builds and publishes the member list, and returns it
// (immutable).
func (m *membership) publish() []Peer {
	ms := make([]Peer, 0, len(m.voters)+len(m.learners))
	for _, id := range m.voters {
		ms = append(ms, Peer{ID: id, Context: m.ctx[id]})
	}
	for _, id := range m.learners {
		ms = append(ms, Peer{ID: id, Context: m.ctx[id], Learner: true})
	}
	slices.SortFunc(ms, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	m.pub.members.Store(&ms)
	return ms
}

// noteRemovedPeer records that member id was removed at index, or, when
// added, that it no longer is.
func (m *membership) noteRemovedPeer(id uint64, removed bool, index uint64) {
	cur := *m.pub.removedPeers.Load()
	if _, was := cur[id]; was == removed {
		return
	}
	next := maps.Clone(cur)
	if removed {
		next[id] = index
	} else {
		delete(next, id)
	}
	m.pub.removedPeers.Store(&next)
}

// refusal says why the changes must not apply, deterministically on every
// node (they all decide on the same conf state): removing the last voter,
// which raft would panic on. Nil means apply them.
func (m *membership) refusal(changes []*raftpb.ConfChangeSingle) error {
	if len(changes) == 1 && changes[0].GetType() == raftpb.ConfChangeRemoveNode &&
		len(m.voters) == 1 && m.voters[0] == changes[0].GetNodeId() {
		return fmt.Errorf("%w: removing member %d would leave no voter", ErrConfChangeRefused, changes[0].GetNodeId())
	}
	return nil
}

// apply records the changes of the conf change applied at index in the
// member contexts. It returns the bookkeeping to store with the resulting
// conf state, and whether a member joined that was not one before.
func (m *membership) apply(changes []*raftpb.ConfChangeSingle, context []byte, index uint64) (mc memberChange, joined bool) {
	for _, ch := range changes {
		id := ch.GetNodeId()
		if id == 0 {
			continue
		}
		switch ch.GetType() {
		case raftpb.ConfChangeRemoveNode:
			delete(m.ctx, id)
			mc = memberChange{id: id, remove: true, self: id == m.self, index: index}
		case raftpb.ConfChangeAddNode, raftpb.ConfChangeAddLearnerNode:
			old, ok := m.ctx[id]
			joined = joined || !ok
			// A promotion carries the learner's context again; an empty
			// one keeps what is stored.
			if ok && len(context) == 0 {
				mc = memberChange{id: id, context: old}
			} else {
				m.ctx[id] = slices.Clone(context)
				mc = memberChange{id: id, context: context}
			}
		}
	}
	if len(changes) > 1 {
		// Only raftlog's own single changes are written today; keep the
		// conf state right and the contexts as they are.
		mc = memberChange{}
	}
	return mc, joined
}

// restore takes over the membership of an installed snapshot: its conf
// state, member contexts and removed members. The removed members add to
// those this node knew of (a snapshot of an earlier release carries none);
// a member the snapshot lists is no longer one removed.
func (m *membership) restore(cs *raftpb.ConfState, sm *snapMembers) {
	m.setConf(cs)
	m.ctx = sm.contexts
	cur := *m.pub.removedPeers.Load()
	next := make(map[uint64]uint64, len(cur)+len(sm.removed))
	maps.Copy(next, cur)
	for id, index := range sm.removed {
		if id != m.self {
			next[id] = index
		}
	}
	for id := range sm.contexts {
		delete(next, id)
	}
	m.pub.removedPeers.Store(&next)
}

// promote, on the leader, proposes to make a voter of the learner with the
// lowest id that can safely vote: its log has reached commit, it is
// answering (heard from within live's window: a learner that caught up
// and then died must not become a voter the cluster waits for), and with
// it the voters heard from recently, this leader among them, make a quorum
// of the new voter set, so the promotion cannot leave the cluster without
// one. A learner whose context promotable refuses (Config.Promotable) is
// never a candidate. One change at a time: the caller proposes nothing
// while a conf change is not yet applied.
func (m *membership) promote(rn *raft.RawNode, commit uint64, live *liveness, promotable func([]byte) bool, log *slog.Logger) {
	if len(m.learners) == 0 {
		return
	}
	var cand uint64
	rn.WithProgress(func(id uint64, typ raft.ProgressType, pr tracker.Progress) {
		if typ != raft.ProgressTypeLearner || promotable != nil && !promotable(m.ctx[id]) {
			return
		}
		if pr.Match >= commit && live.answering(id) && (cand == 0 || id < cand) {
			cand = id
		}
	})
	if cand == 0 {
		return
	}
	if !m.quorumAnswersWith(live) {
		log.Debug("caught-up learner not promoted: too few voters answering", "learner", memberID(cand), "voters", memberIDs(m.voters))
		return
	}
	cc := &raftpb.ConfChange{
		Type:    raftpb.ConfChangeAddNode.Enum(),
		NodeId:  new(cand),
		Context: encodeProposal(proposalID{}, m.ctx[cand]),
	}
	if err := rn.ProposeConfChange(cc); err != nil {
		log.Debug("propose learner promotion", "learner", memberID(cand), "err", err)
		return
	}
	// Until the entry shows up in a Ready, no second promotion: the
	// loop handles that Ready before the next tick.
	log.Info("promoting caught-up learner to voter", "learner", memberID(cand), "commit", commit)
}

// quorumAnswersWith reports whether the voters answering (this node
// always is) and one more, a learner that answers, make a quorum of the
// voter set grown by that learner.
func (m *membership) quorumAnswersWith(live *liveness) bool {
	answering := 1 // the learner
	for _, id := range m.voters {
		if id == m.self || live.answering(id) {
			answering++
		}
	}
	return answering >= (len(m.voters)+1)/2+1
}

// liveness is the node goroutine's record of when each peer was last
// heard from, in ticks: every message received counts. Raft's own
// Progress.RecentActive stays true for up to an election timeout after a
// peer died; this answers within window ticks.
type liveness struct {
	ticks  uint64
	window uint64            // ticks within which a peer heard from is answering
	heard  map[uint64]uint64 // peer -> ticks when last heard from
}

func newLiveness(window uint64) liveness {
	return liveness{window: window, heard: map[uint64]uint64{}}
}

// tick counts one tick.
func (l *liveness) tick() { l.ticks++ }

// note records that a message from id was received now. It allocates only
// for a peer not heard from before.
func (l *liveness) note(id uint64) { l.heard[id] = l.ticks }

// answering reports whether id was heard from within the window.
func (l *liveness) answering(id uint64) bool {
	at, ok := l.heard[id]
	return ok && l.ticks-at <= l.window
}

// confChangeEntry is a decoded configuration change entry.
type confChangeEntry struct {
	cc      raftpb.ConfChangeI
	changes []*raftpb.ConfChangeSingle
	pid     proposalID // the proposer's; zero when nobody waits
	context []byte     // the member's context
}

// decodeConfChange decodes a conf change entry raftlog wrote.
func decodeConfChange(e *raftpb.Entry) (confChangeEntry, error) {
	var (
		c      confChangeEntry
		rawCtx []byte
	)
	if e.GetType() == raftpb.EntryConfChange {
		cc := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return c, fmt.Errorf("raftlog: decode conf change at %d: %w", e.GetIndex(), err)
		}
		c.cc, rawCtx = cc, cc.GetContext()
		c.changes = []*raftpb.ConfChangeSingle{{Type: cc.Type, NodeId: cc.NodeId}}
	} else {
		cc := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return c, fmt.Errorf("raftlog: decode conf change at %d: %w", e.GetIndex(), err)
		}
		c.cc, rawCtx, c.changes = cc, cc.GetContext(), cc.GetChanges()
	}
	// raftlog writes a proposal header into the context; a context
	// without one (another writer) is taken as the member's context.
	var err error
	if c.pid, c.context, err = decodeProposal(rawCtx); err != nil {
		c.pid, c.context = proposalID{}, rawCtx
	}
	return c, nil
}

// applyConfChange applies the configuration change of entry e: to raft,
// to the member registry (raft.db, then memory), to the proposer waiting
// for it on this node and to OnConfChange. A new member of a compacted log
// gets a snapshot that lists it; the leader tells a member it removed.
func (l *loop) applyConfChange(e *raftpb.Entry) error {
	c, err := decodeConfChange(e)
	if err != nil {
		return err
	}
	refused := l.members.refusal(c.changes)
	if refused != nil {
		l.log.Warn("refused configuration change", "index", e.GetIndex(), "err", refused)
		c.cc, c.changes = &raftpb.ConfChange{}, nil
	}
	cs := l.rn.ApplyConfChange(c.cc)
	mc, joined := l.members.apply(c.changes, c.context, e.GetIndex())
	if joined {
		l.snaps.wantFor(e.GetIndex())
	}
	if err := l.storage.saveConfChange(cs, mc); err != nil {
		return err
	}
	if mc.id != 0 && !mc.self {
		l.members.noteRemovedPeer(mc.id, mc.remove, mc.index)
	}
	l.members.setConf(cs)
	l.applied = e.GetIndex()
	members := l.members.publish()
	l.publish()
	l.log.Info("applied configuration change", "index", e.GetIndex(), "voters", memberIDs(l.members.voters), "learners", memberIDs(l.members.learners))

	if mc.remove && !mc.self && l.leader == l.id {
		l.tellRemoved(mc.id, e)
	}
	if c.pid.node == l.id && c.pid.boot == l.boot && c.pid.seq != 0 {
		l.waits.finish(c.pid.seq, proposalResult{Result: Result{Err: refused}})
	}
	if l.cfg.OnConfChange != nil && len(c.changes) == 1 {
		ch := c.changes[0]
		applied := ConfChangeApplied{
			Index:   e.GetIndex(),
			Type:    ch.GetType(),
			ID:      ch.GetNodeId(),
			Members: slices.Clone(members),
		}
		if ch.GetType() != raftpb.ConfChangeRemoveNode {
			applied.Context = slices.Clone(l.members.ctx[ch.GetNodeId()])
		}
		l.cfg.OnConfChange(applied)
	}
	if mc.self {
		l.members.removedSelf = true
	}
	return nil
}

// tellRemoved sends member id, which the leader has just removed, the entry
// of its removal with the commit index covering it. Raft no longer sends
// anything to a member it removed, and the append that carried the commit
// index may not have reached it (say it was being probed), so without this
// the removed member might never apply its removal and stop. It is a valid
// append from the current leader: the entry is committed and persisted. A
// member whose log does not match at the previous index rejects it.
func (l *loop) tellRemoved(id uint64, e *raftpb.Entry) {
	if l.cfg.Transport == nil {
		return
	}
	prevTerm, err := l.storage.Term(e.GetIndex() - 1)
	if err != nil {
		return
	}
	l.cfg.Transport.Send([]*raftpb.Message{{
		Type:    raftpb.MsgApp.Enum(),
		From:    new(l.id),
		To:      new(id),
		Term:    new(l.term),
		Index:   new(e.GetIndex() - 1),
		LogTerm: new(prevTerm),
		Entries: []*raftpb.Entry{e},
		Commit:  new(e.GetIndex()),
	}})
}
