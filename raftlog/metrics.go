package raftlog

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the raft log's Prometheus metrics, the latencies an operator
// of a raft-based store looks at first: the write-ahead log's fsync, the
// persist step of a Ready and the state machine's apply. Build them with
// NewMetrics and set Config.Metrics. Observing costs a few clock reads per
// Ready and no allocation.
type Metrics struct {
	walFsync       prometheus.Histogram
	save           prometheus.Histogram
	apply          prometheus.Histogram
	appliedEntries prometheus.Counter
}

// latencyBuckets are those of etcd's disk latencies, from 100µs (a fast
// disk's fsync) up to about 6.5 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 17)

// NewMetrics creates the metrics and registers them on reg; a nil reg
// leaves them unregistered.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		walFsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "metalog_wal_fsync_duration_seconds",
			Help: "Time to fdatasync one raft write-ahead log record (the entries and hard state of one Ready), " +
				"like etcd_disk_wal_fsync_duration_seconds.",
			Buckets: latencyBuckets,
		}),
		save: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "metalog_raft_save_duration_seconds",
			Help: "Time to persist one raft Ready that had something to write: its entries and hard state " +
				"(one write-ahead log record), and a snapshot received from the leader.",
			Buckets: latencyBuckets,
		}),
		apply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_raft_apply_duration_seconds",
			Help:    "Time the state machine took to apply one batch of committed raft entries.",
			Buckets: latencyBuckets,
		}),
		appliedEntries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_raft_applied_entries_total",
			Help: "Committed raft entries (proposed commands) handed to the state machine to apply; " +
				"a repair's replay is not counted.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.walFsync, m.save, m.apply, m.appliedEntries)
	}
	return m
}
