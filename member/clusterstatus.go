package member

// ClusterStatus is the cluster as one member sees it (ListMembers): the
// members, each with its own status when it answered.
type ClusterStatus struct {
	// Leader is the raft id (hex) of the leader this member knows of, ""
	// for none; Term is its term.
	Leader string
	Term   uint64
	// Members are sorted by name.
	Members []*MemberStatus
	// ClusterID is the cluster's id (lowercase hex), "" for a cluster
	// bootstrapped before clusters had ids.
	ClusterID string
	// Forcings are the --force-new-cluster runs that made this member's
	// cluster out of older ones, oldest first.
	Forcings []ClusterForcing
	// HistoryNamed says whether the cluster names its history through its
	// log.
	HistoryNamed bool
}

// MemberStatus is one member and, when it answered, its own status.
type MemberStatus struct {
	// ID is the raft id (hex).
	ID, Name, PeerAddr string
	// GRPCAddr and HTTPAddr are the member's client listeners, as it
	// reported them.
	GRPCAddr, HTTPAddr string
	// CQLAddr is the member's CQL listener, as it reported it; "" when it
	// serves none.
	CQLAddr string
	// Role is RoleVoter, RoleLearner (catching up, promoted once it has)
	// or RoleObserver (never promoted).
	Role   string
	Leader bool
	// Reachable says the member answered; the fields below are then what
	// it reported.
	Reachable                       bool
	Term, CommitIndex, AppliedIndex uint64
	Epoch                           uint64
	// Digest is the hex digest of the member's schema.
	Digest string
	// Error says why the member could not be asked, or what its answer
	// shows of a split (another cluster, another configuration).
	Error string
	// History are the member's most recent (epoch, digest) pairs, oldest
	// first.
	History []EpochDigest
	// Alarms are the member's raised alarms ("NOSPACE").
	Alarms []string
	// ClusterID is the id (lowercase hex) of the cluster the member says
	// it belongs to.
	ClusterID string
	// Configuration are the members the member's own configuration
	// lists, sorted by id.
	Configuration []ConfigMember
	// KnownLeader is the raft id (hex) of the leader the member knows of,
	// "" for none; equal to ID when it says it leads.
	KnownLeader string
}

// ConfigMember is one member of a configuration, as one member sees it.
type ConfigMember struct {
	// ID is the raft id (hex); Role RoleVoter, RoleLearner or RoleObserver; PeerAddr where
	// the other members reach it.
	ID, Name, Role, PeerAddr string
}

// EpochDigest is the hex schema digest a member had at one epoch.
type EpochDigest struct {
	Epoch  uint64
	Digest string
}

// ClusterForcing is one --force-new-cluster: member By (raft id, hex)
// made cluster To out of its log of cluster From, at log index Index.
type ClusterForcing struct {
	From, To string
	Index    uint64
	By       string
}

// ClusterCheck is the verdict of one agreement check (CheckCluster).
type ClusterCheck struct {
	// Agreement is true when every reachable member agrees with the
	// reference (members only behind agree).
	Agreement bool
	// Reference is the member the others were compared with (the leader
	// when it answered).
	Reference string
	Members   []MemberCheck
	// RPCs counts the NodeStatus calls made: one per other member.
	RPCs uint32
	// ClusterID is this member's cluster id (lowercase hex).
	ClusterID string
	// Reason says why Agreement is false, in one line.
	Reason string
}

// MemberCheck is one member's verdict in a ClusterCheck.
type MemberCheck struct {
	Name, ID     string
	Epoch        uint64
	Digest       string
	AppliedIndex uint64
	// State is "agrees", "behind", "diverged", "unreachable" or "split";
	// Detail says why.
	State string
	// DivergedSinceEpoch is, for "diverged", the first epoch at which its
	// digest differs from the reference's (0: older than the history).
	DivergedSinceEpoch uint64
	Detail             string
	// ClusterID is the id of the cluster the member answered for.
	ClusterID string
}

// RepairResult is the state of a repaired member (RepairMember).
type RepairResult struct {
	Name   string
	Epoch  uint64
	Digest string
}
