package member

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// metrics are the member's Prometheus metrics: its write path, the raft
// snapshots it takes and sends, and gauges read from the raft node, the
// transport and the state machine when Prometheus scrapes (no bookkeeping
// on the hot path). The schema store's metrics are metadata's (store), the
// WAL's and the apply's raftlog's (raft).
type metrics struct {
	reg prometheus.Registerer // nil: nothing registered
	// byIdentity labels rateLimited by identity (MetricsIdentityLabels).
	byIdentity bool

	store            *metadata.Metrics
	raft             *raftlog.Metrics
	proposalsPending prometheus.Gauge
	proposalsFailed  prometheus.Counter
	statusCalls      prometheus.Counter
	rateLimited      *prometheus.CounterVec

	snapshotsTaken         prometheus.Counter
	snapshotStoreFailures  prometheus.Counter
	snapshotSendBytes      prometheus.Counter
	snapshotSendDuration   prometheus.Histogram
	snapshotReceiveSeconds prometheus.Histogram

	watchers     prometheus.Gauge
	watchEvents  prometheus.Counter
	watchResyncs prometheus.Counter
	watchCuts    prometheus.Counter
	watchLag     prometheus.Histogram
}

// newMetrics makes the member's metrics and registers them on reg (none
// when nil); byIdentity labels those about identities by identity.
func newMetrics(reg prometheus.Registerer, byIdentity bool) *metrics {
	rateLabels, rateHelp := []string(nil), "Execute requests this member refused because their identity was over ddl_rate_per_identity (metrics_identity_labels: true labels them by identity)."
	if byIdentity {
		rateLabels, rateHelp = []string{"identity"}, "Execute requests this member refused because their identity was over ddl_rate_per_identity, by identity (token:NAME, cert:CN, anonymous)."
	}
	m := &metrics{
		reg:        reg,
		byIdentity: byIdentity,
		store:      metadata.NewMetrics(reg),
		raft:       raftlog.NewMetrics(reg),
		proposalsPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metalog_raft_proposals_pending",
			Help: "Proposals this node is waiting on to commit and apply.",
		}),
		proposalsFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_raft_proposals_failed_total",
			Help: "Proposals that ended without applying here: nothing proposed (no leader, stop), or the outcome unknown (no quorum by the deadline, leader lost), which may still apply.",
		}),
		statusCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_cluster_status_calls_total",
			Help: "NodeStatus calls this node made to other members (cluster status and check, the CQL listener's membership poll and system.peers reads: one per member per round).",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metalog_ddl_rate_limited_total",
			Help: rateHelp,
		}, rateLabels),
		snapshotsTaken: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshots_total",
			Help: "Metadata snapshots stored (after which the log was compacted).",
		}),
		snapshotStoreFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshot_store_failures_total",
			Help: "Snapshots that could not be stored (too large for max_mutation_size, or a write error); the log is not compacted past the last good one.",
		}),
		snapshotSendBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshot_send_bytes_total",
			Help: "Snapshot bytes sent to followers.",
		}),
		snapshotSendDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_snapshot_send_duration_seconds",
			Help:    "Time to send one snapshot to a follower.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		snapshotReceiveSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_snapshot_receive_duration_seconds",
			Help:    "Time to receive and verify one snapshot from the leader.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		watchers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metalog_watchers",
			Help: "Change feeds (Watch streams) this member serves now.",
		}),
		watchEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_watch_events_sent_total",
			Help: "Events this member sent on change feeds.",
		}),
		watchResyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_watch_resyncs_total",
			Help: "Change feeds that were behind the history kept (history_retention_epochs) and got a resync message with the whole schema.",
		}),
		watchCuts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_watch_lagging_cuts_total",
			Help: "Change feeds cut because they fell more than watch_max_lag_epochs behind this member (WATCH_LAGGING; the client resumes them).",
		}),
		watchLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_watch_lag_epochs",
			Help:    "How many epochs this member was past an epoch when it sent the epoch's events on a change feed (0: live).",
			Buckets: append([]float64{0}, prometheus.ExponentialBuckets(1, 4, 10)...),
		}),
	}
	if !byIdentity {
		m.rateLimited.WithLabelValues() // the one series, from the start at zero
	}
	if reg != nil {
		reg.MustRegister(m.proposalsPending, m.proposalsFailed, m.statusCalls, m.rateLimited,
			m.snapshotsTaken, m.snapshotStoreFailures, m.snapshotSendBytes, m.snapshotSendDuration, m.snapshotReceiveSeconds,
			m.watchers, m.watchEvents, m.watchResyncs, m.watchCuts, m.watchLag)
	}
	return m
}

// countRateLimited counts a request of identity refused by the rate limit
// per identity: under its identity only with byIdentity, since /metrics
// is open and the label would name tokens and certificates.
func (m *metrics) countRateLimited(identity string) {
	if m.byIdentity {
		m.rateLimited.WithLabelValues(identity).Inc()
		return
	}
	m.rateLimited.WithLabelValues().Inc()
}

// snapshotSent is the transport's OnSnapshotSent.
func (m *metrics) snapshotSent(bytes int, d time.Duration, err error) {
	if err == nil {
		m.snapshotSendBytes.Add(float64(bytes))
		m.snapshotSendDuration.Observe(d.Seconds())
	}
}

// snapshotReceived is the transport's OnSnapshotReceived.
func (m *metrics) snapshotReceived(_ int, d time.Duration, err error) {
	if err == nil {
		m.snapshotReceiveSeconds.Observe(d.Seconds())
	}
}

// watch registers the gauges read from mb's raft node, transport and state
// machine; they exist once mb is started.
func (m *metrics) watch(mb *Member) {
	if m.reg == nil {
		return
	}
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
	node, tr, sm, self := mb.core.node, mb.core.transport, mb.core.sm, mb.core.id
	m.reg.MustRegister(
		gauge("metalog_epoch", "Epoch of the metadata this node has applied.", func() float64 { return float64(sm.Current().Epoch) }),
		gauge("metalog_schema_keyspaces", "Keyspaces in the schema this node has applied.", func() float64 { return float64(sm.Current().Schema.KeyspaceCount()) }),
		gauge("metalog_schema_tables", "Tables in the schema this node has applied.", func() float64 { return float64(sm.Current().Schema.TableCount()) }),
		gauge("metalog_raft_is_leader", "1 if this member is the raft leader.", func() float64 { return boolean(node.Status().Leader == self) }),
		gauge("metalog_raft_has_leader", "1 if this member knows a leader.", func() float64 { return boolean(node.Status().Leader != 0) }),
		gauge("metalog_raft_term", "Current raft term.", func() float64 { return float64(node.Status().Term) }),
		gauge("metalog_raft_commit_index", "Highest raft log index known committed.", func() float64 { return float64(node.Status().Commit) }),
		gauge("metalog_raft_applied_index", "Highest raft log index applied by this member.", func() float64 { return float64(node.Status().Applied) }),
		gauge("metalog_raft_voters", "Voting members in this member's configuration.", func() float64 { return float64(len(node.Status().Voters)) }),
		gauge("metalog_raft_learners", "Learners (catching-up members, promoted once caught up) in this member's configuration; observers are not among them.", func() float64 { return float64(countRoles(node.Members())[RoleLearner]) }),
		gauge("metalog_raft_observers", "Observers (members that never vote) in this member's configuration.", func() float64 { return float64(countRoles(node.Members())[RoleObserver]) }),
		counter("metalog_peer_send_failures_total", "Raft messages that could not be sent to a peer.", func() float64 { return float64(tr.Stats().SendFailures) }),
		counter("metalog_peer_reconnects_total", "Peer stream (re)connections.", func() float64 { return float64(tr.Stats().Reconnects) }),
		counter("metalog_peer_dropped_messages_total", "Raft messages dropped because a peer's queue was full.", func() float64 { return float64(tr.Stats().Dropped) }),
		gauge("metalog_snapshot_sends_in_flight", "Snapshot sends to followers running now.", func() float64 { return float64(tr.SnapshotStats().SendsInFlight) }),
		gauge("metalog_history_oldest_epoch", "Oldest epoch whose changes this member keeps (history_retention_epochs).", func() float64 { return float64(sm.OldestEpoch()) }),
		gauge("metalog_history_missing_epochs", "Epochs of history this member is copying from a peer since it was rebuilt from a snapshot.", func() float64 {
			from, to := sm.HistoryGap()
			return float64(to - min(from, to))
		}),
		gauge("metalog_degraded", "1 when the member serves but an operator must act (see /readyz), e.g. a snapshot could not be stored or no space is left.", func() float64 { return boolean(mb.degradedReason() != "") }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "metalog_alarm", ConstLabels: prometheus.Labels{"kind": "nospace"},
			Help: "1 while the member's alarm of this kind is raised: nospace, its data dir has less than min_free_space_bytes free (or a write found no space), so it refuses DDL and guardrail changes."},
			func() float64 { raised, _, _ := mb.core.space.state(); return boolean(raised) }),
		executions("prepared", func(used, _ uint64) uint64 { return used }, mb.core.expected),
		executions("executed", func(_, executed uint64) uint64 { return executed }, mb.core.expected),
		gauge("metalog_data_dir_free_bytes", "Bytes free on the data dir's filesystem at the last check (before each append batch and every second).", func() float64 {
			_, _, free := mb.core.space.state()
			return float64(free)
		}),
	)
}

// executions is the series how of metalog_ddl_executions_total: the
// DDL commands applied with the result this member's pre-check prepared,
// or executed on apply, as pick takes it from e.Counts.
func executions(how string, pick func(used, executed uint64) uint64, e *metadata.Expected) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "metalog_ddl_executions_total", ConstLabels: prometheus.Labels{"how": how},
		Help: "DDL commands this member applied, by how: prepared, with the result its pre-check made when it proposed the command, on the state the command applied on; executed, on apply (another member proposed it, or the state moved between the pre-check and the apply)."},
		func() float64 { return float64(pick(e.Counts())) })
}

// countRoles counts the members of each role.
func countRoles(members []raftlog.Peer) map[string]int {
	n := map[string]int{}
	for _, p := range members {
		n[roleOf(p)]++
	}
	return n
}
