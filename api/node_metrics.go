package api

import (
	"github.com/prometheus/client_golang/prometheus"
)

// registerNodeMetrics exports the raft node's and the transport's state,
// read when Prometheus scrapes (no bookkeeping on the hot path).
func (s *Server) registerNodeMetrics(reg prometheus.Registerer) {
	self := MemberID(s.cfg.Name)
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	boolean := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	reg.MustRegister(
		gauge("metalog_raft_is_leader", "1 if this member is the raft leader.", func() float64 { return boolean(s.node.Status().Leader == self) }),
		gauge("metalog_raft_has_leader", "1 if this member knows a leader.", func() float64 { return boolean(s.node.Status().Leader != 0) }),
		gauge("metalog_raft_term", "Current raft term.", func() float64 { return float64(s.node.Status().Term) }),
		gauge("metalog_raft_commit_index", "Highest raft log index known committed.", func() float64 { return float64(s.node.Status().Commit) }),
		gauge("metalog_raft_applied_index", "Highest raft log index applied by this member.", func() float64 { return float64(s.node.Status().Applied) }),
		gauge("metalog_raft_voters", "Voting members in this member's configuration.", func() float64 { return float64(len(s.node.Status().Voters)) }),
		gauge("metalog_raft_learners", "Learners (catching-up members) in this member's configuration.", func() float64 { return float64(len(s.node.Status().Learners)) }),
		counter("metalog_peer_send_failures_total", "Raft messages that could not be sent to a peer.", func() float64 { return float64(s.transport.Stats().SendFailures) }),
		counter("metalog_peer_reconnects_total", "Peer stream (re)connections.", func() float64 { return float64(s.transport.Stats().Reconnects) }),
		counter("metalog_peer_dropped_messages_total", "Raft messages dropped because a peer's queue was full.", func() float64 { return float64(s.transport.Stats().Dropped) }),
		gauge("metalog_snapshot_sends_in_flight", "Snapshot sends to followers running now.", func() float64 { return float64(s.transport.SnapshotStats().SendsInFlight) }),
		gauge("metalog_degraded", "1 when the member serves but an operator must act (see /readyz), e.g. a snapshot could not be stored.", func() float64 { return boolean(s.degraded.get() != "") }),
	)
}
