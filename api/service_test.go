package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// fakeMember answers every call from its fields and records what it was
// asked. It serves as every slice of a Backend (backend).
type fakeMember struct {
	view      *metadata.ClusterMetadata
	outcome   metadata.Outcome
	err       error
	readiness member.Readiness

	plan           member.PlanResult
	requestOutcome member.RequestOutcome

	requests       []member.Request
	outcomeQueries []member.RequestQuery
	dryRuns        []member.Request
	plans          []member.PlanRequest
	reads          []string // "minEpoch/consistency"
	sets           []map[string]string
}

func (f *fakeMember) Execute(_ context.Context, req member.Request) (metadata.Outcome, error) {
	f.requests = append(f.requests, req)
	return f.outcome, f.err
}

func (f *fakeMember) DryRun(_ context.Context, req member.Request) (metadata.Outcome, [32]byte, error) {
	f.dryRuns = append(f.dryRuns, req)
	return f.outcome, [32]byte{0xab}, f.err
}

func (f *fakeMember) Plan(_ context.Context, req member.PlanRequest) (member.PlanResult, error) {
	f.plans = append(f.plans, req)
	return f.plan, f.err
}

func (f *fakeMember) Read(_ context.Context, minEpoch uint64, consistency string, visible func(string) bool) (*metadata.ClusterMetadata, error) {
	f.reads = append(f.reads, fmt.Sprintf("%d/%s", minEpoch, consistency))
	if f.view == nil {
		return nil, f.err
	}
	return f.view.Visible(visible), f.err
}

func (f *fakeMember) Backup(context.Context) ([]byte, *metadata.ClusterMetadata, error) {
	return nil, nil, status.Error(codes.Unimplemented, "fakeMember: no backups")
}

func (f *fakeMember) ReadAt(_ context.Context, epoch uint64, consistency string, visible func(string) bool) (*metadata.ClusterMetadata, error) {
	f.reads = append(f.reads, fmt.Sprintf("at %d/%s", epoch, consistency))
	if f.view == nil {
		return nil, f.err
	}
	return f.view.Visible(visible), f.err
}

func (f *fakeMember) SetGuardrails(_ context.Context, _, _ string, set map[string]string) (uint64, guardrails.Settings, error) {
	f.sets = append(f.sets, set)
	return f.view.Epoch, f.view.Guardrails, f.err
}

func (f *fakeMember) History(context.Context, member.HistoryQuery) (member.HistoryPage, error) {
	return member.HistoryPage{}, f.err
}

func (f *fakeMember) RequestOutcome(_ context.Context, q member.RequestQuery) (member.RequestOutcome, error) {
	f.outcomeQueries = append(f.outcomeQueries, q)
	return f.requestOutcome, f.err
}

func (f *fakeMember) Watch(context.Context, member.WatchQuery, func(member.WatchMessage) error) error {
	return f.err
}

func (f *fakeMember) ListMembers(context.Context) (*member.ClusterStatus, error) {
	return &member.ClusterStatus{}, f.err
}

func (f *fakeMember) CheckCluster(context.Context) (*member.ClusterCheck, error) {
	return &member.ClusterCheck{}, f.err
}

func (f *fakeMember) AddMember(_ context.Context, name, addr string, _ bool) (*member.MemberStatus, error) {
	return &member.MemberStatus{Name: name, PeerAddr: addr}, f.err
}

func (f *fakeMember) RemoveMember(context.Context, string) error { return f.err }

func (f *fakeMember) RepairMember(context.Context, string) (*member.RepairResult, error) {
	return &member.RepairResult{}, f.err
}

func (f *fakeMember) Readiness() member.Readiness { return f.readiness }

// backend is f as every slice of a Backend, without an identity.
func (f *fakeMember) backend() Backend {
	return Backend{Writer: f, Reader: f, Cluster: f, Readiness: f}
}

// The fake serves as each slice.
var (
	_ Writer       = (*fakeMember)(nil)
	_ Reader       = (*fakeMember)(nil)
	_ ClusterAdmin = (*fakeMember)(nil)
	_ Readier      = (*fakeMember)(nil)
)

// shopView is metadata at epoch 2 with keyspace shop and table shop.orders.
func shopView(t *testing.T) *metadata.ClusterMetadata {
	t.Helper()
	m := &metadata.ClusterMetadata{Guardrails: guardrails.Defaults()}
	m, _, _, err := m.Apply(metadata.Command{Text: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newTestService(f *fakeMember) (*service, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return newService(f.backend(), slog.New(slog.DiscardHandler), newMetrics(reg)), reg
}

// TestExecuteHandler: the handler passes the request to the member as it
// came, turns the outcome into the answer and the error into its code, and
// counts what it answered.
func TestExecuteHandler(t *testing.T) {
	f := &fakeMember{outcome: metadata.Outcome{Epoch: 7, Results: []metadata.StatementResult{
		{Text: "CREATE TABLE shop.t (id int PRIMARY KEY)", Result: schema.Result{Kind: "CREATE TABLE", Keyspace: "shop", Table: "t", Applied: true}, Epoch: 7},
	}, Warnings: []guardrails.Warning{{Guardrail: "tables_warn_threshold", Message: "many tables"}, {Message: "indexes not copied"}}}}
	svc, reg := newTestService(f)
	resp, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE t (id int PRIMARY KEY)", Keyspace: "shop", RequestId: "r1", Atomic: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (member.Request{Statements: "CREATE TABLE t (id int PRIMARY KEY)", Keyspace: "shop", RequestID: "r1", Atomic: true, Principal: Anonymous}); !reflect.DeepEqual(f.requests[0], want) {
		t.Errorf("member got %+v, want %+v", f.requests[0], want)
	}
	if resp.Epoch != 7 || len(resp.Results) != 1 || resp.Results[0].Table != "t" || !resp.Results[0].Applied || resp.Warnings[0] != "many tables" {
		t.Errorf("answer %v", resp)
	}
	if got := testutil.ToFloat64(svc.metrics.statements.WithLabelValues("CREATE TABLE", "applied")); got != 1 {
		t.Errorf("statements counted %v, want 1", got)
	}
	if got := testutil.ToFloat64(svc.metrics.guardrailWarnings.WithLabelValues("tables_warn_threshold")); got != 1 {
		t.Errorf("guardrail warnings counted %v, want 1", got)
	}
	// A statement's own warning goes to the client, not to a guardrail's
	// counter.
	if len(resp.Warnings) != 2 || resp.Warnings[1] != "indexes not copied" {
		t.Errorf("warnings %q", resp.Warnings)
	}
	if n, err := testutil.GatherAndCount(reg, "metalog_guardrail_warnings_total"); err != nil || n != len(guardrails.Names())+1 {
		t.Errorf("guardrail warning series: %d, %v; want one per guardrail (%d)", n, err, len(guardrails.Names())+1)
	}

	f.outcome = metadata.Outcome{}
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{&metadata.StatementError{Position: 1, Total: 1, Err: &schema.Error{Code: schema.ErrAlreadyExists, Statement: "CREATE TABLE"}}, codes.AlreadyExists},
		{fmt.Errorf("propose: %w", member.ErrNoLeader), codes.Unavailable},
		{status.Error(codes.InvalidArgument, "statements: no statement to execute"), codes.InvalidArgument},
	} {
		f.err = tc.err
		_, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "x"})
		if status.Code(err) != tc.want || !strings.Contains(err.Error(), status.Convert(toStatus(tc.err)).Message()) {
			t.Errorf("%v: got %v, want %v with the member's message", tc.err, err, tc.want)
		}
	}
	if got := testutil.ToFloat64(svc.metrics.statements.WithLabelValues("CREATE TABLE", "AlreadyExists")); got != 1 {
		t.Errorf("refused statements counted %v, want 1", got)
	}

	// A request refused by the statement limit is not a DDL answered.
	before := testutil.CollectAndCount(reg, "metalog_ddl_duration_seconds")
	f.err = fmt.Errorf("limit: %w", member.ErrTooManyStatements)
	if _, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "x"}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("statement limit: %v, want ResourceExhausted", err)
	}
	if after := testutil.CollectAndCount(reg, "metalog_ddl_duration_seconds"); after != before {
		t.Errorf("the refused request was observed as a DDL (%d series, was %d)", after, before)
	}
}

// TestReadHandlers: reads check the format before asking the member, pass
// min_epoch and consistency through, and say what does not exist.
func TestReadHandlers(t *testing.T) {
	f := &fakeMember{view: shopView(t)}
	svc, _ := newTestService(f)
	ctx := context.Background()
	if _, err := svc.GetSchema(ctx, &pb.GetSchemaRequest{Format: "yaml"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad format: %v", err)
	}
	if len(f.reads) != 0 {
		t.Errorf("the member was asked for a view of a bad request: %v", f.reads)
	}
	ks, err := svc.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "shop", Format: "cql", MinEpoch: 2, Consistency: member.Linearizable})
	if err != nil {
		t.Fatal(err)
	}
	if f.reads[0] != "2/linearizable" || ks.Epoch != 2 || len(ks.Keyspace.Tables) != 1 || !strings.Contains(ks.Cql, "CREATE TABLE shop.orders") {
		t.Errorf("read %v answered %v", f.reads, ks)
	}
	_, err = svc.GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "nope"})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "table shop.nope does not exist (epoch 2)") {
		t.Errorf("missing table: %v", err)
	}
	f.err = status.Error(codes.Unavailable, "min_epoch 9: this node is at epoch 2")
	if _, err := svc.GetSchema(ctx, &pb.GetSchemaRequest{MinEpoch: 9}); status.Code(err) != codes.Unavailable {
		t.Errorf("member's refusal: %v", err)
	}
}

// TestReadyz: /readyz says what the member's readiness says.
func TestReadyz(t *testing.T) {
	for _, tc := range []struct {
		r        member.Readiness
		code     int
		body     string
		degraded bool
	}{
		{member.Readiness{Detail: "no leader"}, http.StatusServiceUnavailable, "not ready: no leader\n", false},
		{member.Readiness{Ready: true, Detail: "leader 1 term 2 applied 3 epoch 4"}, http.StatusOK, "ok: leader 1 term 2 applied 3 epoch 4\n", false},
		{member.Readiness{Ready: true, Degraded: "snapshot at index 9 not stored"}, http.StatusOK, "degraded: snapshot at index 9 not stored\n", true},
	} {
		w := httptest.NewRecorder()
		readyz(&fakeMember{readiness: tc.r}).ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		if w.Code != tc.code || w.Body.String() != tc.body || (w.Header().Get("X-Metalog-Degraded") == "true") != tc.degraded {
			t.Errorf("%+v: %d %q %v", tc.r, w.Code, w.Body, w.Header())
		}
	}
}

// TestExecuteLogsOneLine: an applied request is logged once, at INFO, with
// its request id, epoch and statement kinds.
func TestExecuteLogsOneLine(t *testing.T) {
	f := &fakeMember{outcome: metadata.Outcome{Epoch: 9, Results: []metadata.StatementResult{
		{Result: schema.Result{Kind: "CREATE KEYSPACE"}}, {Result: schema.Result{Kind: "CREATE TABLE"}}, {Result: schema.Result{Kind: "CREATE TABLE"}},
	}}}
	svc, _ := newTestService(f)
	var buf strings.Builder
	svc.logger = slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "x", RequestId: "r7"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "request_id=r7") ||
		!strings.Contains(lines[0], "epoch=9") || !strings.Contains(lines[0], `statements="CREATE KEYSPACE, CREATE TABLE x2"`) {
		t.Fatalf("log:\n%s", buf.String())
	}
}
