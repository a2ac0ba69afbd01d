// Package member composes one metalog member: the metadata state machine
// (metadata) fed by the raft node (raftlog), the peer transport and the
// peer server on the peer port, and the services clients reach it by.
//
// A Member owns the lifecycle (Start, Close, Err) and the identity (Name,
// ID, ClusterID, Identity, PeerAddr, Readiness, and CertificateMemberName
// for a joining member's first call); bootstrap and join, repair, the
// degraded state and the peer side are its own. What the member's parts
// share is its core: the id and addresses, the config, logger and
// metrics, the NOSPACE alarm, the state machine, the transport, the
// applier and the raft node. On the core stand three services, each its
// own type, reached from the Member:
//
//   - Writes (Member.Writes): Execute and DryRun, Plan, SetGuardrails and
//     SetKeyspaceGuardrails.
//   - Reads (Member.Reads): Read and ReadAt (the schema at a minimum epoch
//     and a consistency level, or as it was at an epoch), History, Watch,
//     RequestOutcome, Backup, and EndFeeds, which ends the change feeds
//     before a drain.
//   - Cluster (Member.Cluster): ListMembers, AddMember, RemoveMember,
//     RepairMember and CheckCluster.
//
// Every change takes the write path on the member that receives it:
//
//	parse the CQL once -> limits (statements per request, then the rate
//	of changes per identity) -> pre-check on the member's state
//	-> (refused? confirm with the leader by ReadIndex, check again)
//	-> propose with the request id, again after a leader change
//	-> the typed outcome of the apply (epoch, results, warnings)
//
// Writes reaches the raft node only through a small interface (proposer:
// Propose, ReadIndex, ClusterID), so that the path is tested on a fake
// that applies to a real state machine. Errors are domain errors
// (errors.go: the sentinels, and the types of the errors it words
// itself), which the listeners map to their codes (api/apierr); the
// member answers its peers through member/internal/peerrpc.
//
// Caveats: a request whose wait ends without an answer may still apply
// (ErrOutcomeUnknown; RequestOutcome tells later); a refused request pays
// a ReadIndex round before it is refused, so that a member just behind
// does not refuse what the cluster admits; the services exist once Start
// returns, and not after a failed Start.
//
// Two build tags exist for tests only. metalog_faults (faulthook.go) makes
// the peer transport obey the fault file named by METALOG_PEER_FAULTS_FILE,
// so that the integration tests can partition real processes and drop or
// delay the messages between two of them (members named, resolved through
// the current membership); metalog_brokenreads (brokenreads.go) makes
// Linearizable reads skip ReadIndex, to prove that the linearizability
// check of the nemesis catches stale reads.
// A build without them, as every release is, has neither.
//
// It does not own the client listeners, TLS material, authentication,
// limits on connections and request sizes, or HTTP: the api package serves
// a Member's services to clients (api.MemberBackend), and package server
// builds its Config from the operator's file.
//
//	m, err := member.Start(member.Config{
//		DataDir:  dir,
//		Name:     "n1",
//		PeerAddr: "127.0.0.1:7071",
//	})
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	out, err := m.Writes().Execute(ctx, member.Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
//	// out.Epoch is the keyspace's epoch; apierr.Code(err) is err's gRPC code.
package member
