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

	"github.com/metalog/metalog/api/apierr"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/buildinfo"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// metrics are the API's Prometheus metrics: requests, and the DDL answered
// (the member registers its own on the same registry).
type metrics struct {
	requests          *prometheus.CounterVec
	ddlDuration       *prometheus.HistogramVec
	guardrailWarnings *prometheus.CounterVec
	guardrailFailures *prometheus.CounterVec
	statements        *prometheus.CounterVec
	refused           *prometheus.CounterVec
}

// newMetrics registers the API metrics and the Go runtime and process
// collectors on reg.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
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
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalog_requests_refused_total",
		Help: "Requests this node refused before they changed anything, by reason (unauthenticated, permission_denied, scope, rate_limited, too_many_statements, too_many_requests, too_many_streams, nospace, guardrail, invalid).",
	}, []string{"reason"})
	for _, r := range refusalReasons {
		m.refused.WithLabelValues(r)
	}
	// Every guardrail's counters exist from the start at zero, so that an
	// alert on their increase sees the first event too.
	for _, name := range append(guardrails.Names(), guardrails.MetadataSize) {
		m.guardrailWarnings.WithLabelValues(name)
		m.guardrailFailures.WithLabelValues(name)
	}
	reg.MustRegister(m.requests, m.ddlDuration, m.guardrailWarnings, m.guardrailFailures, m.statements, m.refused,
		buildinfo.Read().NewGauge(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *metrics) observeExecute(d time.Duration, code codes.Code, ok bool) {
	result := "ok"
	if !ok {
		result = code.String()
	}
	m.ddlDuration.WithLabelValues(result).Observe(d.Seconds())
}

// unaryInterceptor counts every unary call by method and code, and the
// refused ones by reason.
func (m *metrics) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	m.requests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	m.countRefusal(err)
	return resp, err
}

// streamInterceptor counts the refused streams (Watch, server reflection)
// by reason.
func (m *metrics) streamInterceptor(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	err := handler(srv, ss)
	m.countRefusal(err)
	return err
}

// countRefusal counts err under its refusal reason, if it is a refusal.
func (m *metrics) countRefusal(err error) {
	if reason := refusalReason(err); reason != "" {
		m.refuse(reason)
	}
}

// refuse counts a refusal of reason (one of refusalReasons).
func (m *metrics) refuse(reason string) { m.refused.WithLabelValues(reason).Inc() }

// countStatements counts each statement of an answered Execute by kind and
// result. A refused request counts once, under the kind of the statement
// that failed when it is known.
func (m *metrics) countStatements(out metadata.Outcome, err error) {
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
		m.statements.WithLabelValues(kind, apierr.Code(err).String()).Inc()
	}
}
