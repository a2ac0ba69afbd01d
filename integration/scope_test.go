package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestScopedDDLRoles runs a server whose tokens hold scoped roles, the
// scoped ones made by `metalog token new --roles`: ddl@shop creates and
// alters in shop and is refused in other (PermissionDenied), a request
// mixing shop and other applies nothing, ddl@tenant_* works in tenant_a
// and not in tenantb, a scoped operator cannot take a snapshot, and
// `history --json` shows the role each change used.
func TestScopedDDLRoles(t *testing.T) {
	ca := newPKI(t, "clients")
	srvCert, srvKey := ca.issue("server", "metalog-server", time.Time{}, time.Time{})
	tokenLine := func(name, roles string) (token, line string) {
		out, errOut, rc := runBinary(t, "token", "new", "--name", name, "--roles", roles)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if rc != 0 || len(lines) != 2 {
			t.Fatalf("token new --roles %s: rc=%d %s %s", roles, rc, out, errOut)
		}
		return strings.TrimSpace(out), lines[1]
	}
	shopTok, shopLine := tokenLine("shop", "ddl@shop,reader@shop")
	tenantTok, tenantLine := tokenLine("tenants", "ddl@tenant_*")
	opsTok, opsLine := tokenLine("shopops", "operator@shop")
	if _, errOut, rc := runBinary(t, "token", "new", "--roles", "ddl@shop.t"); rc == 0 || !strings.Contains(errOut, `scope "shop.t"`) {
		t.Fatalf("token new with a bad scope: rc=%d %s", rc, errOut)
	}
	tokens := filepath.Join(ca.dir, "tokens")
	if err := os.WriteFile(tokens, []byte("admin "+tokenHash("admin-token")+" ddl,reader\n"+shopLine+"\n"+tenantLine+"\n"+opsLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	s.args = []string{"--client-cert-file", srvCert, "--client-key-file", srvKey, "--auth-token-file", tokens, insecurePeerArg}
	s.startAsync()
	s.waitReadyTLS(ca.tlsConfig(""))
	as := func(tok string, args ...string) (string, string, int) {
		return s.cli(append(args, "--cacert", ca.caFile, "--token", tok)...)
	}
	ks := func(name string) string {
		return "CREATE KEYSPACE " + name + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
	}
	if out, errOut, rc := as("admin-token", "exec", "-e", ks("shop")+";"+ks("other")+";"+ks("tenant_a")+";"+ks("tenantb")); rc != 0 {
		t.Fatalf("admin: rc=%d %s %s", rc, out, errOut)
	}
	for _, tc := range []struct {
		tok, cql string
	}{
		{shopTok, "CREATE TABLE shop.orders (id int PRIMARY KEY)"},
		{shopTok, "ALTER TABLE shop.orders ADD total int"},
		{tenantTok, "CREATE TABLE tenant_a.t (id int PRIMARY KEY)"},
	} {
		if out, errOut, rc := as(tc.tok, "exec", "-e", tc.cql); rc != 0 {
			t.Fatalf("%s: rc=%d %s %s", tc.cql, rc, out, errOut)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := dialTLS(t, s.grpcAddr, ca.tlsConfig(""), grpc.WithPerRPCCredentials(bearerToken("admin-token")))
	shop := dialTLS(t, s.grpcAddr, ca.tlsConfig(""), grpc.WithPerRPCCredentials(bearerToken(shopTok)))
	tenants := dialTLS(t, s.grpcAddr, ca.tlsConfig(""), grpc.WithPerRPCCredentials(bearerToken(tenantTok)))
	before, err := admin.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    pb.MetadataServiceClient
		req  *pb.ExecuteRequest
		want string
	}{
		{shop, &pb.ExecuteRequest{Statements: "CREATE TABLE other.t (id int PRIMARY KEY)"},
			"CREATE TABLE other.t: token:shop holds ddl@shop,reader@shop, not ddl on keyspace other"},
		{shop, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.mixed (id int PRIMARY KEY); CREATE TABLE other.mixed (id int PRIMARY KEY)"},
			"statement 2 of 2: CREATE TABLE other.mixed: token:shop holds"},
		{shop, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.mixed (id int PRIMARY KEY); CREATE TABLE other.mixed (id int PRIMARY KEY)", DryRun: true},
			"statement 2 of 2: CREATE TABLE other.mixed"},
		{shop, &pb.ExecuteRequest{Statements: "DROP KEYSPACE other"}, "not ddl on keyspace other"},
		{tenants, &pb.ExecuteRequest{Statements: "CREATE TABLE tenantb.t (id int PRIMARY KEY)"},
			"token:tenants holds ddl@tenant_*, not ddl on keyspace tenantb"},
	} {
		if _, err := tc.c.Execute(ctx, tc.req); status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want PermissionDenied containing %q", tc.req.Statements, err, tc.want)
		}
	}
	after, err := admin.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Epoch != before.Epoch {
		t.Fatalf("refused requests moved the epoch %d -> %d", before.Epoch, after.Epoch)
	}
	if _, err := admin.GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "mixed"}); status.Code(err) != codes.NotFound {
		t.Fatalf("shop.mixed after the refused request: %v, want NotFound", err)
	}
	_, errOut, rc := as(shopTok, "exec", "-e", "CREATE TABLE other.t (id int PRIMARY KEY)")
	if rc == 0 || !strings.HasPrefix(errOut, "metalog: PermissionDenied: CREATE TABLE other.t: token:shop holds ddl@shop,reader@shop, not ddl on keyspace other; nothing of this request was applied") {
		t.Fatalf("exec in other with ddl@shop: rc=%d %s", rc, errOut)
	}
	_, errOut, rc = as(opsTok, "backup", "save", filepath.Join(t.TempDir(), "snap"))
	if rc == 0 || !strings.Contains(errOut, "Backup needs role operator for every keyspace (a backup holds every keyspace); token:shopops holds operator@shop") {
		t.Fatalf("backup save with operator@shop: rc=%d %s", rc, errOut)
	}

	out, errOut, rc := as("admin-token", "history", "--json")
	if rc != 0 {
		t.Fatalf("history: rc=%d %s %s", rc, out, errOut)
	}
	for _, want := range []string{
		`"principal":"admin","role":"","request_id"`,
		`"principal":"token:shop","role":"ddl@shop","request_id":`,
		`"principal":"token:tenants","role":"ddl@tenant_*","request_id":`,
	} {
		if !strings.Contains(out, strings.Replace(want, `"admin"`, `"token:admin"`, 1)) {
			t.Errorf("history --json has no %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `"role":"ddl@shop"`); n != 2 {
		t.Errorf("%d events with role ddl@shop, want 2 (create and alter):\n%s", n, out)
	}
	if out, _, _ := as("admin-token", "history"); !strings.Contains(out, "token:shop (ddl@shop)  ALTER TABLE shop.orders") {
		t.Errorf("history text does not show the role:\n%s", out)
	}
}
