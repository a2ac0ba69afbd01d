package api

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
)

// scopedFake is a fakeMember that also changes per-keyspace overrides,
// applying them to its view.
type scopedFake struct {
	*fakeMember
	asked []string // scope/reset
}

func (f *scopedFake) SetKeyspaceGuardrails(_ context.Context, _, _, scope string, set map[string]string, reset, _ bool) (uint64, guardrails.Override, error) {
	f.asked = append(f.asked, scope)
	o, _ := f.view.KeyspaceGuardrails.Get(scope)
	if reset {
		o = guardrails.Override{}
	}
	o.Scope = scope
	for k, v := range set {
		var err error
		if o, err = o.Set(k, v); err != nil {
			return 0, o, status.Error(codes.InvalidArgument, err.Error())
		}
	}
	next := *f.view
	next.KeyspaceGuardrails = next.KeyspaceGuardrails.With(o)
	next.Epoch++
	f.view = &next
	return next.Epoch, o, nil
}

// TestKeyspaceGuardrailsHandlers: set with a keyspace goes to the override,
// get with one shows the values with their sources and the override that
// applies, get without one lists every override; reset removes it.
func TestKeyspaceGuardrailsHandlers(t *testing.T) {
	f := &scopedFake{fakeMember: &fakeMember{view: shopView(t)}}
	svc, _ := newTestService(f.fakeMember)
	svc.w = f
	ctx := context.Background()
	resp, err := svc.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Keyspace: "tenant_*", Set: map[string]string{"tables_fail_threshold": "5"}})
	if err != nil || resp.Override.GetScope() != "tenant_*" || resp.Override.Set["tables_fail_threshold"] != "5" {
		t.Fatalf("set: %v %v", resp, err)
	}
	if len(f.sets) != 0 {
		t.Fatalf("a keyspace set reached the cluster's settings: %v", f.sets)
	}
	source := func(values []*pb.GuardrailValue, name string) string {
		for _, v := range values {
			if v.Name == name {
				return v.Source + "=" + v.Value
			}
		}
		return ""
	}
	if got := source(resp.Guardrails, "tables_fail_threshold"); got != "keyspace:tenant_*=5" {
		t.Errorf("set answer: %s", got)
	}
	g, err := svc.GetGuardrails(ctx, &pb.GetGuardrailsRequest{Keyspace: "tenant_a"})
	if err != nil || source(g.Guardrails, "tables_fail_threshold") != "keyspace:tenant_*=5" || source(g.Guardrails, "tables_warn_threshold") != "default=1000" || len(g.Overrides) != 1 {
		t.Fatalf("get tenant_a: %v %v", g, err)
	}
	g, err = svc.GetGuardrails(ctx, &pb.GetGuardrailsRequest{Keyspace: "shop"})
	if err != nil || source(g.Guardrails, "tables_fail_threshold") != "default=-1" || len(g.Overrides) != 0 {
		t.Fatalf("get shop: %v %v", g, err)
	}
	g, err = svc.GetGuardrails(ctx, &pb.GetGuardrailsRequest{})
	if err != nil || len(g.Overrides) != 1 || g.Overrides[0].Scope != "tenant_*" {
		t.Fatalf("get: %v %v", g, err)
	}
	if _, err := svc.GetGuardrails(ctx, &pb.GetGuardrailsRequest{Keyspace: "no-such"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad keyspace: %v", err)
	}
	if _, err := svc.SetGuardrails(ctx, &pb.SetGuardrailsRequest{ResetOverride: true}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("reset without keyspace: %v", err)
	}
	resp, err = svc.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Keyspace: "tenant_*", ResetOverride: true})
	if err != nil || resp.Override != nil || f.view.KeyspaceGuardrails.Len() != 0 {
		t.Fatalf("reset: %v %v", resp, err)
	}
	// A backend without per-keyspace guardrails says so.
	plain, _ := newTestService(&fakeMember{view: &metadata.ClusterMetadata{Guardrails: guardrails.Defaults()}})
	if _, err := plain.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Keyspace: "shop", Set: map[string]string{"tables_fail_threshold": "1"}}); status.Code(err) != codes.Unimplemented {
		t.Errorf("plain backend: %v", err)
	}
}

// TestHTTPKeyspaceGuardrails: PUT /v1/guardrails with keyspace (numbers as
// values) changes the override; GET /v1/guardrails?keyspace= answers the
// values with their sources.
func TestHTTPKeyspaceGuardrails(t *testing.T) {
	f := &scopedFake{fakeMember: &fakeMember{view: shopView(t)}}
	svc, reg := newTestService(f.fakeMember)
	svc.w = f
	rt, err := newRoutes()
	if err != nil {
		t.Fatal(err)
	}
	gw := newGateway(rt)
	if err := pb.RegisterMetadataServiceHandlerServer(context.Background(), gw, svc); err != nil {
		t.Fatal(err)
	}
	cfg := testOptions()
	h := httpHandler(&cfg, reg, svc.metrics, f, rt, gw)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("PUT", "/v1/guardrails", strings.NewReader(`{"keyspace": "shop", "set": {"tables_fail_threshold": 50}}`)))
	if w.Code != 200 || len(f.asked) != 1 || f.asked[0] != "shop" || !strings.Contains(w.Body.String(), `"scope":"shop"`) {
		t.Fatalf("PUT: %d %s (asked %v)", w.Code, w.Body, f.asked)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/guardrails?keyspace=shop", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"source":"keyspace:shop"`) {
		t.Fatalf("GET: %d %s", w.Code, w.Body)
	}
}
