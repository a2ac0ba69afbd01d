// Package member composes one metalog member: the metadata state machine
// (metadata) fed by the raft node (raftlog), the peer transport and the
// peer server on the peer port, bootstrap and join, repair, the degraded
// state, and the write path every change takes on the member that receives
// it:
//
//	parse the CQL once -> limits (statements per request, then the rate
//	of changes per identity) -> pre-check on the member's view
//	-> (refused? confirm with the leader by ReadIndex, check again)
//	-> propose with the request id, again after a leader change
//	-> the typed outcome of the apply (epoch, results, warnings)
//
// It owns the member's lifecycle (Start, Close, Err), its reads (View, at
// a minimum epoch and a consistency level), guardrail changes, membership
// (ListMembers, AddMember, RemoveMember, RepairMember, CheckCluster), its
// readiness, its metrics and its errors: domain errors (errors.go: the
// sentinels, and the types of the errors it words itself), which the
// listeners map to their codes (api/apierr); it answers its peers
// through member/internal/peerrpc.
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
// a Member to clients, and builds its Config from the operator's file.
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
//	out, err := m.Execute(ctx, member.Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
//	// out.Epoch is the keyspace's epoch; apierr.Code(err) is err's gRPC code.
package member
