package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// rateLimitErr is the member's refusal of token:ci.
var rateLimitErr = &member.RateLimitError{Identity: "token:ci", Rate: 0.5, Burst: 2, RetryAfter: 1234 * time.Millisecond}

// refusedCount is metalog_requests_refused_total{reason} on reg.
func refusedCount(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "metalog_requests_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no metalog_requests_refused_total{reason=%q}", reason)
	return 0
}

// TestRateLimitedOverGRPC: the member's rate-limit refusal is
// ResourceExhausted with its message, an ErrorInfo (RATE_LIMITED, the
// setting, the identity) and a RetryInfo of the exact delay; it counts
// as a refusal, not as a DDL answered.
func TestRateLimitedOverGRPC(t *testing.T) {
	f := &fakeMember{err: rateLimitErr}
	svc, reg := newTestService(f)
	_, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t (id int PRIMARY KEY)"})
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted || st.Message() != rateLimitErr.Error() || !strings.Contains(st.Message(), "retry after 1.3s") {
		t.Fatalf("%v, want ResourceExhausted %q", err, rateLimitErr.Error())
	}
	var info *errdetails.ErrorInfo
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	if info == nil || info.Reason != reasonRateLimited || info.Domain != errorDomain ||
		info.Metadata["setting"] != "ddl_rate_per_identity" || info.Metadata["identity"] != "token:ci" {
		t.Errorf("ErrorInfo %v", info)
	}
	if retry == nil || retry.RetryDelay.AsDuration() != 1234*time.Millisecond {
		t.Errorf("RetryInfo %v, want 1.234s", retry)
	}
	if n, err := testutil.GatherAndCount(reg, "metalog_statements_total", "metalog_ddl_duration_seconds"); err != nil || n != 0 {
		t.Errorf("a refused request counted as a DDL answered: %d series, %v", n, err)
	}

	// The interceptor counts it by reason, once.
	_, err = svc.metrics.unaryInterceptor(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/metalog.v1.MetadataService/Execute"},
		func(context.Context, any) (any, error) { return nil, err })
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatal(err)
	}
	if got := refusedCount(t, reg, refusedRateLimited); got != 1 {
		t.Errorf("refused{rate_limited} = %v, want 1", got)
	}
}

// TestRateLimitedOverHTTP: over HTTP the refusal is 429 Too Many Requests
// with Retry-After in whole seconds, rounded up, and the gRPC details in
// the body.
func TestRateLimitedOverHTTP(t *testing.T) {
	f := &fakeMember{view: shopView(t), err: rateLimitErr}
	h := testHTTP(t, f)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/execute", strings.NewReader(`{"statements": "CREATE TABLE ks.t (id int PRIMARY KEY)"}`)))
	httpCase{method: "POST", target: "/v1/execute", status: http.StatusTooManyRequests, code: codes.ResourceExhausted,
		contains: []string{"token:ci is over its rate", "retry after 1.3s"}}.check(t, w.Result())
	if got := w.Result().Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2 (1.234s rounded up)", got)
	}
	for _, want := range []string{`"reason":"RATE_LIMITED"`, `"retry_delay":"1.234s"`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("body %s lacks %s", w.Body, want)
		}
	}
	// Other errors have no Retry-After.
	f.err = &limitErr{"too many", member.ErrTooManyStatements}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/execute", strings.NewReader(`{"statements": "x"}`)))
	if w.Code != http.StatusRequestEntityTooLarge || w.Result().Header.Get("Retry-After") != "" {
		t.Errorf("statement limit: %d, Retry-After %q", w.Code, w.Result().Header.Get("Retry-After"))
	}
	for d, want := range map[time.Duration]string{time.Millisecond: "1", time.Second: "1", 1001 * time.Millisecond: "2", 100 * time.Second: "100"} {
		if got := retryAfterHeader(d); got != want {
			t.Errorf("retryAfterHeader(%v) = %s, want %s", d, got, want)
		}
	}
}

// TestRefusalReason: the refusal reasons of the answers, and the answers
// that are no refusal.
func TestRefusalReason(t *testing.T) {
	guardrailFailure := &guardrails.Failure{Guardrail: "tables_fail_threshold", Message: "too many tables"}
	partial := &metadata.StatementError{Position: 2, Total: 2, Applied: 1, Err: guardrailFailure}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"ok", nil, ""},
		{"unauthenticated", status.Error(codes.Unauthenticated, "authentication required"), refusedUnauthenticated},
		{"role", status.Error(codes.PermissionDenied, "Execute needs role ddl"), refusedPermissionDenied},
		{"scope", withInfo(codes.PermissionDenied, "keyspace other is outside ddl@shop", reasonScope, nil), refusedScope},
		{"rate", toStatus(rateLimitErr), refusedRateLimited},
		{"statements", toStatus(&limitErr{"too many", member.ErrTooManyStatements}), refusedTooManyStatements},
		{"nospace", toStatus(&limitErr{"NOSPACE", member.ErrNoSpace}), refusedNoSpace},
		{"in flight", exhausted(errors.New("too many concurrent requests"), reasonTooManyRequests, "max_concurrent_requests_per_connection"), refusedTooManyRequests},
		{"guardrail", toStatus(guardrailFailure), refusedGuardrail},
		{"guardrail in a statement", toStatus(&metadata.StatementError{Position: 2, Total: 2, Err: guardrailFailure}), refusedGuardrail},
		{"partly applied", toStatus(partial), ""},
		{"invalid", status.Error(codes.InvalidArgument, "line 1:0 no viable alternative"), refusedInvalid},
		{"if_epoch", status.Error(codes.FailedPrecondition, "the schema moved past if_epoch"), ""},
		{"other exhausted", status.Error(codes.ResourceExhausted, "grpc: received message larger than max"), ""},
		{"not found", status.Error(codes.NotFound, "keyspace x does not exist"), ""},
		{"unavailable", status.Error(codes.Unavailable, "no leader"), ""},
	} {
		if got := refusalReason(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q (%v)", tc.name, got, tc.want, tc.err)
		}
	}
	// The guardrail's status keeps its code and message, and names it.
	st := status.Convert(toStatus(guardrailFailure))
	if st.Code() != codes.FailedPrecondition || st.Message() != guardrailFailure.Error() || errorInfoReason(st.Err()) != reasonGuardrail {
		t.Errorf("guardrail status %v", st)
	}
	if st := status.Convert(toStatus(partial)); st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "were applied") {
		t.Errorf("partly applied status %v", st)
	}
}

// TestRefusalsCounted: every reason exists at 0 from the start; the
// in-flight limits of gRPC (through the interceptor) and of HTTP (the
// handler's own) count as too_many_requests.
func TestRefusalsCounted(t *testing.T) {
	svc, reg := newTestService(&fakeMember{})
	for _, r := range refusalReasons {
		if got := refusedCount(t, reg, r); got != 0 {
			t.Errorf("%s = %v at start", r, got)
		}
	}
	l := &limits{maxInFlight: 1, refused: svc.metrics.refuse}
	ctx := context.WithValue(context.Background(), connKey{}, new(atomic.Int64))
	ctx.Value(connKey{}).(*atomic.Int64).Add(1)
	_, err := svc.metrics.unaryInterceptor(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/metalog.v1.MetadataService/GetSchema"},
		func(ctx context.Context, req any) (any, error) {
			return l.inFlightUnary(ctx, req, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, nil })
		})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("gRPC in flight: %v", err)
	}
	h := l.httpLimits(1<<20, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	hctx := httpConnContext(context.Background(), nil)
	hctx.Value(httpConnKey{}).(*atomic.Int64).Add(1)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/schema", nil).WithContext(hctx))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("HTTP in flight: %d", w.Code)
	}
	if got := refusedCount(t, reg, refusedTooManyRequests); got != 2 {
		t.Errorf("too_many_requests = %v, want 2", got)
	}
	// A stream refused by auth.
	err = svc.metrics.streamInterceptor(nil, nil, &grpc.StreamServerInfo{}, func(any, grpc.ServerStream) error {
		return status.Error(codes.Unauthenticated, "authentication required")
	})
	if status.Code(err) != codes.Unauthenticated || refusedCount(t, reg, refusedUnauthenticated) != 1 {
		t.Errorf("stream: %v, unauthenticated = %v", err, refusedCount(t, reg, refusedUnauthenticated))
	}
}
