// Package member runs one metalog member: the metadata state machine fed
// by the raft node, the peer port, and the services clients reach it by.
//
// A Member owns its lifecycle (Start, Close, Err) and identity; bootstrap,
// join, repair, the degraded state and the peer side are its own. Its
// parts share a core (the raft node, the state machine, the transport, the
// NOSPACE alarm, peer trust), on which stand three services:
//
//   - Writes: Execute, DryRun, Plan, SetGuardrails, SetKeyspaceGuardrails.
//     A change is parsed once, checked against the member's state (a
//     refusal is confirmed by ReadIndex first, so a member just behind
//     does not refuse what the cluster admits), then proposed with its
//     request id, again after a leader change. Writes reaches the raft
//     node only through a small proposer interface.
//   - Reads: Read and ReadAt (the state at a minimum epoch and consistency,
//     or as it was at an epoch), History, Watch, RequestOutcome, Backup.
//   - Cluster: ListMembers, AddMember, RemoveMember, RepairMember,
//     CheckCluster.
//
// Errors are domain errors (errors.go); the listeners map them to their
// codes with one table (api/apierr). A change whose wait ends without an
// answer may still apply: its error matches ErrOutcomeUnknown and
// RequestOutcome tells later. The client listeners, TLS, authentication
// and request limits are not the member's: package api serves its
// services and package server builds its Config. The build tags
// metalog_faults and metalog_brokenreads exist for tests only
// (faulthook.go, brokenreads.go); no release has them.
//
//	m, err := member.Start(member.Config{DataDir: dir, Name: "n1", PeerAddr: "127.0.0.1:7071"})
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	out, err := m.Writes().Execute(ctx, member.Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
//	// out.Epoch is the epoch the change made.
package member
