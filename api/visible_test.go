package api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// scopedServer starts a server with tokens for an unscoped admin, an
// unscoped reader, reader@shop and reader@tenant_*, and the keyspaces
// shop, other, tenant_a and tenantb with a table t each (epochs 1 to 8),
// then a guardrail change (epoch 9).
func scopedServer(t *testing.T) (*testServer, pb.MetadataServiceClient) {
	srv, c := tokenServer(t, "admin "+HashToken("admin-token")+" ddl,reader,operator\n"+
		"all "+HashToken("all-token")+" reader\n"+
		"shop "+HashToken("shop-token")+" reader@shop\n"+
		"tenants "+HashToken("tenant-token")+" reader@tenant_*,ddl@shop\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := as(ctx, "admin-token")
	for _, ks := range []string{"shop", "other", "tenant_a", "tenantb"} {
		if _, err := c.Execute(admin, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE " + ks + ".t (id int PRIMARY KEY)"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetGuardrails(admin, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "50"}}); err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// tokenServer starts a server on loopback whose tokens are the lines of
// a token file, waits until it is ready, and returns it with a client;
// both are closed when the test ends.
func tokenServer(t *testing.T, tokens string) (*testServer, pb.MetadataServiceClient) {
	t.Helper()
	tt := newTestTokens(t, tokens)
	return dialReady(t, launch(t, func(s *testSettings) {
		s.handlers.Auth = AuthOptions{Enabled: true, Tokens: tt}
		s.member.InsecurePeer = true // a test of the client port
	}))
}

// as is ctx with a bearer token.
func as(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

func protoKeyspaces(ks []*pb.Keyspace) string {
	var out []string
	for _, k := range ks {
		out = append(out, k.GetName())
	}
	return strings.Join(out, ",")
}

// TestScopedReaderSchemaReads: a scoped reader's schema, keyspace and
// table reads see only its keyspaces; the others answer NotFound exactly
// as missing ones do; cluster-level reads are unchanged.
func TestScopedReaderSchemaReads(t *testing.T) {
	_, c := scopedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all, err := c.GetSchema(as(ctx, "all-token"), &pb.GetSchemaRequest{Format: "cql"})
	if err != nil || protoKeyspaces(all.Keyspaces) != "other,shop,tenant_a,tenantb" {
		t.Fatalf("the unscoped reader's schema: %v, %v", protoKeyspaces(all.GetKeyspaces()), err)
	}
	shopCtx := as(ctx, "shop-token")
	shop, err := c.GetSchema(shopCtx, &pb.GetSchemaRequest{Format: "cql"})
	if err != nil {
		t.Fatal(err)
	}
	if protoKeyspaces(shop.Keyspaces) != "shop" || !strings.Contains(shop.Cql, "CREATE TABLE shop.t") || strings.Contains(shop.Cql, "other") || strings.Contains(shop.Cql, "tenant") {
		t.Fatalf("shop's schema: %s\n%s", protoKeyspaces(shop.Keyspaces), shop.Cql)
	}
	if shop.Digest == all.Digest || shop.Epoch != all.Epoch {
		t.Fatalf("shop's digest %s at %d, the whole schema's %s at %d: want the digest of shop alone", shop.Digest, shop.Epoch, all.Digest, all.Epoch)
	}
	tenants, err := c.GetSchema(as(ctx, "tenant-token"), &pb.GetSchemaRequest{})
	if err != nil || protoKeyspaces(tenants.Keyspaces) != "tenant_a" {
		t.Fatalf("tenant_*'s schema: %v, %v", protoKeyspaces(tenants.GetKeyspaces()), err)
	}
	at := uint64(4)
	then, err := c.GetSchema(shopCtx, &pb.GetSchemaRequest{AtEpoch: &at, Format: "cql"})
	if err != nil || protoKeyspaces(then.Keyspaces) != "shop" || strings.Contains(then.Cql, "other") {
		t.Fatalf("shop's schema at epoch 4: %v %v", then, err)
	}

	notFound := func(err error, name string) string {
		t.Helper()
		if status.Code(err) != codes.NotFound {
			t.Fatalf("%s: %v, want NotFound", name, err)
		}
		return strings.ReplaceAll(status.Convert(err).Message(), name, "NAME")
	}
	_, errOther := c.GetKeyspace(shopCtx, &pb.GetKeyspaceRequest{Keyspace: "other"})
	_, errMissing := c.GetKeyspace(shopCtx, &pb.GetKeyspaceRequest{Keyspace: "nosuch"})
	if a, b := notFound(errOther, "other"), notFound(errMissing, "nosuch"); a != b {
		t.Fatalf("an invisible keyspace answers %q, a missing one %q", a, b)
	}
	_, errOther = c.GetTable(shopCtx, &pb.GetTableRequest{Keyspace: "other", Table: "t", Format: "cql"})
	_, errMissing = c.GetTable(shopCtx, &pb.GetTableRequest{Keyspace: "nosuch", Table: "t", Format: "cql"})
	if a, b := notFound(errOther, "other"), notFound(errMissing, "nosuch"); a != b {
		t.Fatalf("a table of an invisible keyspace answers %q, of a missing one %q", a, b)
	}
	if k, err := c.GetKeyspace(shopCtx, &pb.GetKeyspaceRequest{Keyspace: "shop", Format: "cql"}); err != nil || !strings.Contains(k.Cql, "CREATE TABLE shop.t") {
		t.Fatalf("shop's own keyspace: %v %v", k, err)
	}
	if _, err := c.GetKeyspace(as(ctx, "all-token"), &pb.GetKeyspaceRequest{Keyspace: "other"}); err != nil {
		t.Fatalf("the unscoped reader's keyspace other: %v", err)
	}
	if g, err := c.GetGuardrails(shopCtx, &pb.GetGuardrailsRequest{}); err != nil || len(g.Guardrails) == 0 {
		t.Fatalf("guardrails for shop: %v %v", g, err)
	}
	if m, err := c.ListMembers(shopCtx, &pb.ListMembersRequest{}); err != nil || len(m.Members) != 1 {
		t.Fatalf("members for shop: %v %v", m, err)
	}

	// A plan of other by shop's reader starts from nothing.
	p, err := c.Plan(shopCtx, &pb.PlanRequest{Desired: "CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
	if err != nil || len(p.Statements) != 1 || !strings.HasPrefix(p.Statements[0], "CREATE KEYSPACE other") {
		t.Fatalf("shop's plan of other: %v %v", p, err)
	}
	if p, err := c.Plan(as(ctx, "all-token"), &pb.PlanRequest{Desired: "CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil || len(p.Statements) != 0 {
		t.Fatalf("the unscoped plan of other: %v %v", p, err)
	}
}

// TestScopedReaderHistoryAndWatch: a scoped reader's history and feed hold
// its keyspaces' changes and the cluster's; over HTTP too.
func TestScopedReaderHistoryAndWatch(t *testing.T) {
	srv, c := scopedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := func(evs []*pb.Event) string {
		var out []string
		for _, e := range evs {
			out = append(out, strings.TrimSpace(e.Kind+" "+strings.Trim(e.Keyspace+"."+e.Table, ".")))
		}
		return strings.Join(out, "\n")
	}
	from := uint64(0)
	h, err := c.History(as(ctx, "shop-token"), &pb.HistoryRequest{FromEpoch: &from})
	if want := "CREATE KEYSPACE shop\nCREATE TABLE shop.t\nSET GUARDRAILS"; err != nil || events(h.GetEvents()) != want {
		t.Fatalf("shop's history (%v):\n%s\nwant:\n%s", err, events(h.GetEvents()), want)
	}
	if h, err := c.History(as(ctx, "tenant-token"), &pb.HistoryRequest{Limit: 2}); err != nil || events(h.GetEvents()) != "CREATE TABLE tenant_a.t\nSET GUARDRAILS" {
		t.Fatalf("tenant_*'s newest 2 events (%v):\n%s", err, events(h.GetEvents()))
	}
	if h, err := c.History(as(ctx, "all-token"), &pb.HistoryRequest{FromEpoch: &from}); err != nil || len(h.Events) != 9 {
		t.Fatalf("the unscoped history: %d events, %v", len(h.GetEvents()), err)
	}

	stream, err := c.Watch(as(ctx, "shop-token"), &pb.WatchRequest{FromEpoch: &from})
	if err != nil {
		t.Fatal(err)
	}
	var got []*pb.Event
	for len(got) < 3 {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg.Events...)
	}
	if _, err := c.Execute(as(ctx, "admin-token"), &pb.ExecuteRequest{Statements: "CREATE TABLE other.u (id int PRIMARY KEY); CREATE TABLE shop.u (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	msg, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, msg.Events...)
	if want := "CREATE KEYSPACE shop\nCREATE TABLE shop.t\nSET GUARDRAILS\nCREATE TABLE shop.u"; events(got) != want || msg.Epoch != 11 {
		t.Fatalf("shop's feed at %d:\n%s\nwant:\n%s", msg.Epoch, events(got), want)
	}

	// HTTP, through the gateway: the same view.
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+srv.HTTPAddr()+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/v1/schema?format=cql", "shop-token"); code != http.StatusOK || !strings.Contains(body, "shop.t") || strings.Contains(body, "other") {
		t.Fatalf("GET /v1/schema for shop: %d %s", code, body)
	}
	if code, body := get("/v1/keyspaces/other", "shop-token"); code != http.StatusNotFound {
		t.Fatalf("GET /v1/keyspaces/other for shop: %d %s", code, body)
	}
	if code, body := get("/v1/history?from_epoch=0", "shop-token"); code != http.StatusOK || strings.Contains(body, `"other"`) || !strings.Contains(body, `"shop"`) {
		t.Fatalf("GET /v1/history for shop: %d %s", code, body)
	}
}

// TestScopedReaderGuardrails: guardrails get lists to a scoped reader the
// overrides of the scopes it covers, and answers for a keyspace outside
// them as for one without an override, whether or not one exists.
func TestScopedReaderGuardrails(t *testing.T) {
	_, c := scopedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := as(ctx, "admin-token")
	for _, scope := range []string{"shop", "other", "tenant_*"} {
		if _, err := c.SetGuardrails(admin, &pb.SetGuardrailsRequest{Keyspace: scope, Set: map[string]string{"tables_fail_threshold": "7"}}); err != nil {
			t.Fatal(err)
		}
	}
	scopes := func(tok string) string {
		resp, err := c.GetGuardrails(as(ctx, tok), &pb.GetGuardrailsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range resp.GetOverrides() {
			out = append(out, o.GetScope())
		}
		return strings.Join(out, " ")
	}
	for tok, want := range map[string]string{"all-token": "other shop tenant_*", "shop-token": "shop", "tenant-token": "tenant_*"} {
		if got := scopes(tok); got != want {
			t.Errorf("%s sees overrides %q, want %q", tok, got, want)
		}
	}
	source := func(tok, keyspace string) string {
		resp, err := c.GetGuardrails(as(ctx, tok), &pb.GetGuardrailsRequest{Keyspace: keyspace})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range resp.GetGuardrails() {
			if v.GetName() == "tables_fail_threshold" {
				return v.GetValue() + " " + v.GetSource()
			}
		}
		return "none"
	}
	for _, tc := range []struct{ tok, keyspace, want string }{
		{"all-token", "other", "7 keyspace:other"},
		{"shop-token", "shop", "7 keyspace:shop"},
		{"shop-token", "other", "-1 default"},
		{"shop-token", "nosuch", "-1 default"},
		{"tenant-token", "tenant_a", "7 keyspace:tenant_*"},
		{"tenant-token", "shop", "-1 default"},
	} {
		if got := source(tc.tok, tc.keyspace); got != tc.want {
			t.Errorf("%s, keyspace %s: tables_fail_threshold %q, want %q", tc.tok, tc.keyspace, got, tc.want)
		}
	}
}
