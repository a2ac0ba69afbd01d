package api

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/snapshot"
)

// snapshotMetrics are the raft-side snapshot metrics (the size metrics
// belong to metadata, which encodes the snapshots).
type snapshotMetrics struct {
	taken         prometheus.Counter
	storeFailures prometheus.Counter
	sendBytes     prometheus.Counter
	sendDuration  prometheus.Histogram
	recvDuration  prometheus.Histogram
}

func newSnapshotMetrics(reg prometheus.Registerer) *snapshotMetrics {
	m := &snapshotMetrics{
		taken: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshots_total",
			Help: "Metadata snapshots stored (after which the log was compacted).",
		}),
		storeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshot_store_failures_total",
			Help: "Snapshots that could not be stored (too large for max_mutation_size, or a write error); the log is not compacted past the last good one.",
		}),
		sendBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshot_send_bytes_total",
			Help: "Snapshot bytes sent to followers.",
		}),
		sendDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_snapshot_send_duration_seconds",
			Help:    "Time to send one snapshot to a follower.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		recvDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_snapshot_receive_duration_seconds",
			Help:    "Time to receive and verify one snapshot from the leader.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
	}
	reg.MustRegister(m.taken, m.storeFailures, m.sendBytes, m.sendDuration, m.recvDuration)
	return m
}

func (m *snapshotMetrics) sent(bytes int, d time.Duration, err error) {
	if err == nil {
		m.sendBytes.Add(float64(bytes))
		m.sendDuration.Observe(d.Seconds())
	}
}

func (m *snapshotMetrics) received(bytes int, d time.Duration, err error) {
	if err == nil {
		m.recvDuration.Observe(d.Seconds())
	}
}

// degradation records why the node is degraded (it serves, but an operator
// must act), as /readyz and metalog_degraded report it.
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

// onSnapshot runs on the raft goroutine after every snapshot attempt.
func (s *Server) onSnapshot(ev raftlog.SnapshotEvent) {
	if ev.Err != nil {
		s.snapMetrics.storeFailures.Inc()
		reason := fmt.Sprintf("snapshot at index %d not stored: %v", ev.Index, ev.Err)
		if errors.Is(ev.Err, snapshot.ErrTooLarge) {
			reason += "; raise max_mutation_size or drop unused tables: the raft log is kept (not compacted) until a snapshot can be stored"
		}
		s.degraded.set(reason)
		s.logger.Error("metadata snapshot not stored", "index", ev.Index, "err", ev.Err, "max_mutation_size", s.cfg.MaxMutationSize)
		return
	}
	s.snapMetrics.taken.Inc()
	s.degraded.set("")
	s.logger.Info("metadata snapshot stored", "index", ev.Index, "bytes", ev.Size, "duration", ev.Duration)
}
