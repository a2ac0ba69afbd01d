package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema/plan"
)

// TestExecuteDryRunAndIfEpoch: dry_run goes to the member's DryRun (never
// to Execute) and answers dry_run with the digest; if_epoch reaches the
// member as set, 0 included, and unset stays unset.
func TestExecuteDryRunAndIfEpoch(t *testing.T) {
	f := &fakeMember{outcome: metadata.Outcome{Epoch: 3}}
	svc, _ := newTestService(f)
	ctx := context.Background()
	zero := uint64(0)
	resp, err := svc.Execute(ctx, &pb.ExecuteRequest{Statements: "x", DryRun: true, IfEpoch: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.DryRun || resp.Digest != "ab"+strings.Repeat("00", 31) || resp.Epoch != 3 {
		t.Errorf("dry run answer %v", resp)
	}
	if len(f.requests) != 0 || len(f.dryRuns) != 1 || !f.dryRuns[0].HasIfEpoch || f.dryRuns[0].IfEpoch != 0 {
		t.Fatalf("member asked: %d executes, dry runs %+v", len(f.requests), f.dryRuns)
	}
	if _, err := svc.Execute(ctx, &pb.ExecuteRequest{Statements: "x"}); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 1 || f.requests[0].HasIfEpoch {
		t.Errorf("without if_epoch the member got %+v", f.requests)
	}
	f.err = &metadata.EpochMovedError{Want: 2, Have: 5}
	_, err = svc.Execute(ctx, &pb.ExecuteRequest{Statements: "x", IfEpoch: new(uint64(2))})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "if_epoch 2: the schema is at epoch 5") {
		t.Errorf("a moved schema: %v, want FailedPrecondition naming both epochs", err)
	}
}

// TestPlanHandler: Plan passes the request through and answers the plan;
// over HTTP it is POST /v1/plan with the JSON names of the contract.
func TestPlanHandler(t *testing.T) {
	f := &fakeMember{view: shopView(t), plan: member.PlanResult{Epoch: 4, Statements: []string{"DROP TABLE shop.t"},
		Warnings: []string{"DROP TABLE shop.t drops its data"}, Notes: []string{"table shop.u keeps column c"}, Destructive: true,
		Digest: [32]byte{1}, BaseDigest: [32]byte{2}}}
	h := testHTTP(t, f)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/plan", strings.NewReader(`{"desired": "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", "keyspaces": ["shop"], "prune": true, "allow_recreate": true}`)))
	if w.Code != http.StatusOK {
		t.Fatalf("POST /v1/plan: %d %s", w.Code, w.Body)
	}
	for _, want := range []string{`"epoch":"4"`, `"statements":["DROP TABLE shop.t"]`, `"destructive":true`, `"warnings":["DROP TABLE shop.t drops its data"]`,
		`"digest":"01`, `"notes":["table shop.u keeps column c"]`, `"base_digest":"02`} {
		if !strings.Contains(strings.ReplaceAll(w.Body.String(), " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("POST /v1/plan answer %s lacks %s", w.Body, want)
		}
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/plan", strings.NewReader(`{"desired_files": [{"name": "a.cql", "text": "x"}, {"name": "b.cql", "text": "y"}], "drop_columns": true}`)))
	if w.Code != http.StatusOK {
		t.Fatalf("POST /v1/plan with files: %d %s", w.Code, w.Body)
	}
	want := []member.PlanRequest{
		{Desired: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", Keyspaces: []string{"shop"}, Prune: true, AllowRecreate: true},
		{Files: []plan.Source{{Name: "a.cql", Text: "x"}, {Name: "b.cql", Text: "y"}}, DropColumns: true},
	}
	if diff := cmp.Diff(want, f.plans); diff != "" {
		t.Errorf("member asked (-want +got):\n%s", diff)
	}
	f.err = status.Error(codes.FailedPrecondition, "shop.t: the primary key cannot be altered")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/plan", strings.NewReader(`{"desired": "x"}`)))
	httpCase{method: "POST", target: "/v1/plan", status: http.StatusBadRequest, code: codes.FailedPrecondition, contains: []string{"primary key"}}.check(t, w.Result())
}
