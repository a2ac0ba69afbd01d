package member

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/metalog/metalog/raftlog"
)

// ID derives a founding member's raft id from its name: stable, non-zero,
// and the same on every member, so --initial-cluster needs no ids. A
// member added later gets an id the cluster never used instead
// (Cluster.AddMember), so that a removed member's id is never reused.
func ID(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	if id := h.Sum64(); id != 0 {
		return id
	}
	return 1
}

// FormatID is how ids (member, cluster, history) appear to users and on
// the wire (raftlog.FormatID), for the layers above the member.
func FormatID(id uint64) string { return raftlog.FormatID(id) }

// parseID reads a hex member id.
func parseID(s string) (uint64, bool) {
	id, err := strconv.ParseUint(s, 16, 64)
	return id, err == nil && id != 0
}

// memberInfo is what the cluster records about a member in its raft conf
// change context: enough for peers to reach it and operators to name it,
// and whether it is an observer: a learner the leader never promotes, so
// that it never votes nor counts toward a quorum.
type memberInfo struct {
	Name     string `json:"name"`
	PeerAddr string `json:"peer_addr"`
	Observer bool   `json:"observer,omitempty"`
}

// The roles of a member (MemberStatus.Role, ConfigMember.Role).
const (
	RoleVoter    = "voter"
	RoleLearner  = "learner"
	RoleObserver = "observer"
)

// roleOf is the role of raft member p: a learner added as an observer is
// one for good.
func roleOf(p raftlog.Peer) string {
	if !p.Learner {
		return RoleVoter
	}
	if info, err := parseMemberInfo(p.Context); err == nil && info.Observer {
		return RoleObserver
	}
	return RoleLearner
}

// promotable is raftlog.Config.Promotable: every learner but an observer
// (one whose context cannot be read is promoted, as before observers).
func promotable(context []byte) bool {
	info, err := parseMemberInfo(context)
	return err != nil || !info.Observer
}

func (m memberInfo) marshal() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("member: marshal member %+v: %v", m, err))
	}
	return b
}

func parseMemberInfo(b []byte) (memberInfo, error) {
	var m memberInfo
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("member context %q: %w", b, err)
	}
	return m, nil
}
