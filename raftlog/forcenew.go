package raftlog

import (
	"fmt"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ForceNewCluster rewrites the raft log in dir, offline, so that node self
// is its cluster's only voter once started again, keeping everything it
// had received: the recovery from a lost quorum that etcd's
// --force-new-cluster makes. A removal of every other member is appended
// to its log, one ConfChangeRemoveNode entry each, and the whole log is
// marked committed, so Start applies it and the node, alone, elects
// itself. The whole log, not only up to the stored commit index: that is
// persisted lazily (it may be behind what this node applied), so entries
// after it may be committed and acknowledged changes; the few at the end
// that the cluster never committed are kept too, as if committed (their
// clients got no answer, or an error saying they may still commit).
// Entries the lost members committed that this node never received are
// lost. The cluster id stays. It returns the ids removed (none when self
// is alone already).
func ForceNewCluster(dir string, self uint64) ([]uint64, error) {
	st, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	hs, cs, err := st.InitialState()
	if err != nil {
		return nil, err
	}
	members := append(slices.Clone(cs.GetVoters()), cs.GetLearners()...)
	if !slices.Contains(cs.GetVoters(), self) {
		return nil, fmt.Errorf("raftlog: force new cluster: %d is not a voter of the configuration in %s (voters %v, learners %v): only a voter's log can found the new cluster", self, dir, cs.GetVoters(), cs.GetLearners())
	}
	if len(cs.GetVotersOutgoing()) > 0 {
		return nil, fmt.Errorf("raftlog: force new cluster: the configuration in %s is joint (outgoing voters %v), which metalog never proposes", dir, cs.GetVotersOutgoing())
	}
	var removed []uint64
	var ents []*raftpb.Entry
	commit, err := st.LastIndex()
	if err != nil {
		return nil, err
	}
	term, err := st.Term(commit)
	if err != nil {
		return nil, err
	}
	term = max(term, hs.GetTerm())
	for _, id := range members {
		if id == self {
			continue
		}
		data, err := proto.Marshal(&raftpb.ConfChange{Type: raftpb.ConfChangeRemoveNode.Enum(), NodeId: new(id)})
		if err != nil {
			return nil, err
		}
		ents = append(ents, &raftpb.Entry{Term: new(term), Index: new(commit + uint64(len(ents)) + 1), Type: raftpb.EntryConfChange.Enum(), Data: data})
		removed = append(removed, id)
	}
	if len(ents) == 0 {
		return nil, nil
	}
	next := &raftpb.HardState{Term: new(term), Vote: new(hs.GetVote()), Commit: new(commit + uint64(len(ents)))}
	if err := st.save(next, ents, nil, nil); err != nil {
		return nil, fmt.Errorf("raftlog: force new cluster: %w", err)
	}
	return removed, nil
}
