package member

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// core is what a member's services and its peer side share: its identity
// and addresses, its configuration, logger and metrics, and the parts
// Start assembles (the NOSPACE alarm, the state machine, the peer
// transport, the applier, the raft node, the peer trust and the history
// namer). It holds no lifecycle of its own: Member starts and stops what
// it holds.
type core struct {
	id                 uint64
	name, peerAddr     string // this member's, as configured
	grpcAddr, httpAddr string // this member's client listeners, for its status
	cqlAddr            string // this member's CQL listener, for its status
	timeout            time.Duration
	peerDial           grpc.DialOption       // credentials for other members' peer ports
	statusConns        *statusConns          // ListMembers' connections to the peer ports
	handshakes         *raftlog.HandshakeLog // failed peer TLS handshakes, both sides
	logger             *slog.Logger
	statusCalls        prometheus.Counter
	cfg                Config
	metrics            *metrics
	// expected holds the commands this member prepared and proposed, for
	// the state machine to apply without executing them again.
	expected *metadata.Expected

	// Set by Start, in this order, before anything is served.
	space     *spaceAlarm // the NOSPACE alarm
	sm        *metadata.StateMachine
	transport *raftlog.Transport
	applier   *applier
	node      *raftlog.Node
	names     *historyNamer // the cluster and history ids, as applied
	// trust says who the members are (peerauth.go), and knows the members
	// the join target listed (a member that joins): where the prober
	// looks before the log holds them.
	trust *peerTrust
}
