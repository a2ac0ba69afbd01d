package raftlog

import "errors"

var (
	// ErrStopped is returned by every call on a Node (and on its Storage)
	// after Stop, and to proposals still waiting when Stop is called.
	ErrStopped = errors.New("raftlog: stopped")

	// ErrNoLeader is returned, wrapped together with the context's error,
	// by a proposal whose context ended while the cluster had no leader
	// (or while raft kept dropping the proposal, for example during a
	// leadership transfer): nothing of it is in the log, unless the error
	// also matches ErrOutcomeUnknown (an earlier attempt of a conf change
	// may be).
	ErrNoLeader = errors.New("raftlog: no leader")

	// ErrLeaderChanged is returned by a proposal still waiting when the
	// leader changed: raft may have lost it (a follower forwards proposals
	// to the old leader without any acknowledgement), or it may still
	// commit. Retry only what is safe to apply twice, such as a command the
	// state machine deduplicates. Its error also matches ErrOutcomeUnknown.
	ErrLeaderChanged = errors.New("raftlog: leader changed while the proposal was pending; it may or may not commit")

	// ErrOutcomeUnknown is matched (errors.Is) by the error of a Propose,
	// AddLearner or RemoveMember that gave up after its entry may have
	// entered the log: raft took the proposal (appended it on the leader,
	// or forwarded it from a follower) and the call ended (its context, a
	// leader change, Stop) before the entry applied here. The entry may
	// still commit and apply, or never. Every other error of these calls
	// means that nothing of the call is in the log, nor ever will be: raft
	// dropped each attempt, or none reached raft. The error also matches
	// its cause (context.DeadlineExceeded, ErrLeaderChanged, ErrNoLeader,
	// ErrStopped).
	ErrOutcomeUnknown = errors.New("raftlog: outcome unknown: the entry may be in the log and may still commit")

	// ErrBadSnapshotFile is matched by the error of Start when the
	// snapshot file raft.db names cannot be read back: the entries before
	// it are compacted away, so the node cannot start from its data dir.
	ErrBadSnapshotFile = errors.New("raftlog: the snapshot file cannot be read")

	// ErrLocked is returned by Start when another process holds the raft
	// log's file lock.
	ErrLocked = errors.New("raftlog: raft log is locked by another process")

	// ErrAppliedBeyondLog is returned by Start when Config.Applied is
	// beyond the last entry of the raft log: the state machine and the log
	// do not belong together (wrong data directory, or a lost log).
	ErrAppliedBeyondLog = errors.New("raftlog: applied index is beyond the raft log")

	// ErrAppliedCompacted is returned by Start when the entries right after
	// Config.Applied were compacted away, so they cannot be replayed, and
	// the Applier cannot be restored from a snapshot instead (it does not
	// implement Snapshotter, or no stored snapshot covers the gap).
	ErrAppliedCompacted = errors.New("raftlog: entries after the applied index were compacted")

	// ErrRemoved is the Err of a node that applied its own removal from the
	// cluster (its goroutine then stops), and is returned by Start for a
	// data directory whose member was removed.
	ErrRemoved = errors.New("raftlog: this member was removed from the cluster")

	// ErrClusterMismatch is returned by Start for a log of another cluster
	// than Config.ClusterID, and is the Err of a node that a leader of
	// another cluster sends to (its data dir belongs elsewhere).
	ErrClusterMismatch = errors.New("raftlog: cluster id mismatch")

	// ErrJoinIncomplete is returned by Start, without Config.Join, for a
	// log that was begun to join a cluster and never received its
	// membership: starting it as anything but a join would make it a
	// cluster of its own.
	ErrJoinIncomplete = errors.New("raftlog: the data dir holds a join that did not complete")

	// ErrIDRemoved is returned by AddLearner for the id of a member that
	// was removed from the cluster: ids are never reused, so that the
	// removed member's data dir, started again, is told it was removed and
	// never mistaken for the new member.
	ErrIDRemoved = errors.New("raftlog: the id belonged to a member removed from the cluster; member ids are never reused")

	// ErrMemberIDMismatch is returned by Start for a log that records
	// another member id than Config.ID: the data dir belongs to another
	// member (or to an earlier member of the same name).
	ErrMemberIDMismatch = errors.New("raftlog: member id mismatch")

	// ErrConfChangeRefused is returned by RemoveMember when the change was
	// committed but not applied because it would leave no voter.
	ErrConfChangeRefused = errors.New("raftlog: configuration change refused")
)

// errSnapshotTurn is a snapshot send that waited too long for one of
// TransportConfig.MaxConcurrentSnapshotSends turns; raft tries again later.
var errSnapshotTurn = errors.New("raftlog: no snapshot send turn")
