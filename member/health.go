package member

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/snapshot"
)

// Readiness is whether the member is ready to serve, as /readyz reports it.
type Readiness struct {
	// Ready is true once the member knows a leader, has applied the log
	// up to an entry of the leader's term and its cluster's history is
	// named (Identity has a history id), and nothing stopped it.
	Ready bool
	// Detail says why the member is not ready ("no leader", "applying the
	// log (applied A, commit C)", ...) or, when it is, its leader, term,
	// applied index and epoch.
	Detail string
	// Degraded, when not empty, says why an operator must act although the
	// member serves: a snapshot that could not be stored, a schema store a
	// scrub found damaged, no space left. A degraded member
	// stays ready, so that a load balancer does not drop every member at
	// once.
	Degraded string
}

// Readiness reports whether the member is ready, and why not: with the
// peer TLS handshakes that failed lately, which keep a member from its
// cluster without any other trace on its side.
func (m *Member) Readiness() Readiness {
	c := m.core
	st := c.node.Status()
	switch {
	case c.applier.failed() != nil:
		return Readiness{Detail: fmt.Sprintf("apply failed: %v", c.applier.failed())}
	case c.node.Err() != nil:
		return Readiness{Detail: fmt.Sprintf("raft loop stopped: %v", c.node.Err())}
	case st.Leader == 0:
		return Readiness{Detail: peerTLSDetail("no leader", c.handshakes.Recent())}
	case !c.node.Caught():
		return Readiness{Detail: peerTLSDetail(fmt.Sprintf("applying the log (applied %d, commit %d)", st.Applied, st.Commit), c.handshakes.Recent())}
	case !c.names.named():
		return Readiness{Detail: fmt.Sprintf("the cluster has not named its history yet (its leader, %x, names it once it has applied its term's first entries, a caught-up member that began the history (bootstrapped, restored or forced it) after %v if it does not; a member that joined waits for the name; responses carry no history_id until then)",
			st.Leader, followerNamingGrace)}
	}
	detail := fmt.Sprintf("leader %x term %d applied %d epoch %d", st.Leader, st.Term, st.Applied, c.sm.Current().Epoch)
	if c.cfg.InsecurePeer {
		detail += "; " + InsecurePeerWarning
	}
	return Readiness{Ready: true, Degraded: m.degradedReason(), Detail: detail}
}

// InsecurePeerWarning is what a member whose peer port has no TLS while
// clients must authenticate (Config.InsecurePeer) says at start and in
// its readiness.
const InsecurePeerWarning = "WARNING: the peer port has no TLS while clients must authenticate (--insecure-peer): " +
	"anyone who can connect to it can act as a member (apply schema changes past authentication, read every keyspace's history, disrupt the cluster); " +
	"set peer_cert_file, peer_key_file and peer_ca_file"

// degradedReason is why the member is degraded, "" when it is not: its
// NOSPACE alarm, a snapshot that could not be stored, a damaged schema
// store (storeScrub), or several of them.
func (m *Member) degradedReason() string {
	var reasons []string
	if raised, cause, _ := m.core.space.state(); raised {
		reasons = append(reasons, "no space: data dir "+m.core.cfg.DataDir+": "+cause)
	}
	if r := m.degraded.get(); r != "" {
		reasons = append(reasons, r)
	}
	if r := m.scrub.degraded(); r != "" {
		reasons = append(reasons, r)
	}
	return strings.Join(reasons, "; ")
}

// degradation records why the member is degraded (it serves, but an
// operator must act), as Readiness and metalog_degraded report it.
type degradation struct {
	mu     sync.Mutex // guards reason
	reason string
}

func (d *degradation) set(reason string) {
	d.mu.Lock()
	d.reason = reason
	d.mu.Unlock()
}

func (d *degradation) get() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reason
}

// onSnapshot runs on the raft goroutine after every snapshot attempt: a
// snapshot that could not be stored degrades the member (one ERROR line
// with what to do, a metric, /readyz) until one can.
func (m *Member) onSnapshot(ev raftlog.SnapshotEvent) {
	c := m.core
	if ev.Err != nil {
		c.metrics.snapshotStoreFailures.Inc()
		c.space.failedWrite(fmt.Sprintf("snapshot at index %d", ev.Index), ev.Err)
		reason := fmt.Sprintf("snapshot at index %d not stored: %v", ev.Index, ev.Err)
		if errors.Is(ev.Err, snapshot.ErrTooLarge) {
			reason += "; raise max_mutation_size or drop unused tables: the raft log is kept (not compacted) until a snapshot can be stored"
		}
		m.degraded.set(reason)
		c.logger.Error("metadata snapshot not stored", "index", ev.Index, "reason", reason, "max_mutation_size", c.cfg.MaxMutationSize)
		return
	}
	c.metrics.snapshotsTaken.Inc()
	m.degraded.set("") // raftlog logs the stored snapshot
}
