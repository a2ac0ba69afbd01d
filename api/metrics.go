package api

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// Metrics are the API's Prometheus metrics. Build them with NewMetrics on a
// registry of the caller's (never the global one).
type Metrics struct {
	requests          *prometheus.CounterVec
	ddlDuration       *prometheus.HistogramVec
	guardrailWarnings *prometheus.CounterVec
	guardrailFailures *prometheus.CounterVec
	statements        *prometheus.CounterVec
	proposalsPending  prometheus.Gauge
	proposalsFailed   prometheus.Counter
	statusCalls       prometheus.Counter
}

// NewMetrics registers the API metrics, the Go runtime and process
// collectors, and gauges read from sm, on reg.
func NewMetrics(reg prometheus.Registerer, sm *metadata.StateMachine) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metalog_grpc_requests_total",
			Help: "gRPC requests handled (HTTP requests included, through the gateway), by method and status code.",
		}, []string{"method", "code"}),
		ddlDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "metalog_ddl_duration_seconds",
			Help:    "Time from receiving an Execute request to answering it, by result.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"result"}),
	}
	m.guardrailWarnings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalog_guardrail_warnings_total",
		Help: "Guardrail warnings returned to clients by this node, by guardrail.",
	}, []string{"guardrail"})
	m.guardrailFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalog_guardrail_failures_total",
		Help: "DDL refused by a guardrail on this node, by guardrail.",
	}, []string{"guardrail"})
	m.statements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalog_statements_total",
		Help: "DDL statements answered by this node, by statement kind and result (applied, noop, or the error code).",
	}, []string{"kind", "result"})
	m.proposalsPending = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "metalog_raft_proposals_pending",
		Help: "Proposals this node is waiting on to commit and apply.",
	})
	m.proposalsFailed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "metalog_raft_proposals_failed_total",
		Help: "Proposals that did not commit (no leader, no quorum, deadline, stop).",
	})
	// Every guardrail's counters exist from the start at zero, so that an
	// alert on their increase sees the first event too.
	for _, name := range append(guardrails.Names(), guardrails.MetadataSize) {
		m.guardrailWarnings.WithLabelValues(name)
		m.guardrailFailures.WithLabelValues(name)
	}
	m.statusCalls = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "metalog_cluster_status_calls_total",
		Help: "NodeStatus calls this node made to other members (cluster status and check: one per member per round).",
	})
	reg.MustRegister(m.requests, m.ddlDuration, m.guardrailWarnings, m.guardrailFailures,
		m.statements, m.proposalsPending, m.proposalsFailed, m.statusCalls,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "metalog_epoch",
			Help: "Epoch of the metadata this node has applied.",
		}, func() float64 { return float64(sm.Current().Epoch) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "metalog_schema_keyspaces",
			Help: "Keyspaces in the schema this node has applied.",
		}, func() float64 { return float64(sm.Current().Schema.KeyspaceCount()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "metalog_schema_tables",
			Help: "Tables in the schema this node has applied.",
		}, func() float64 { return float64(sm.Current().Schema.TableCount()) }),
	)
	return m
}

func (m *Metrics) observeExecute(d time.Duration, code codes.Code, ok bool) {
	result := "ok"
	if !ok {
		result = code.String()
	}
	m.ddlDuration.WithLabelValues(result).Observe(d.Seconds())
}

// unaryInterceptor counts every unary call by method and code.
func (m *Metrics) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	m.requests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	return resp, err
}

// countStatements counts each statement of an answered Execute by kind and
// result. A refused request counts once, under the kind of the statement
// that failed when it is known.
func (m *Metrics) countStatements(out metadata.Outcome, err error) {
	for _, r := range out.Results {
		result := "applied"
		if !r.Result.Applied {
			result = "noop"
		}
		m.statements.WithLabelValues(r.Result.Kind, result).Inc()
	}
	if err != nil {
		kind := "unknown"
		var se *metadata.StatementError
		var schemaErr *schema.Error
		if errors.As(err, &se) && errors.As(se.Err, &schemaErr) && schemaErr.Statement != "" {
			kind = schemaErr.Statement
		}
		m.statements.WithLabelValues(kind, codeOf(err).String()).Inc()
	}
}
