package api

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcmd "google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	mdata "github.com/metalog/metalog/metadata"
)

// TestEveryMethodHasAScopeRule says, for every method of the service,
// whether a scoped grant of its role may call it: "unscoped" for the
// methods that need the role for every keyspace (unscopedMethods), "handler"
// for those whose handlers limit the call to the grant's keyspaces. A new
// method fails it until it is given a rule here and, if it needs one, in
// unscopedMethods.
func TestEveryMethodHasAScopeRule(t *testing.T) {
	want := map[string]string{
		"Execute":       "handler", // member.checkScope
		"GetSchema":     "handler",
		"GetKeyspace":   "handler",
		"GetTable":      "handler",
		"ListMembers":   "handler", // no keyspace in it
		"CheckCluster":  "handler", // no keyspace in it
		"GetGuardrails": "handler",
		"SetGuardrails": "unscoped",
		"AddMember":     "unscoped",
		"RemoveMember":  "unscoped",
		"RepairMember":  "unscoped",
		"Watch":         "handler",
		"History":       "handler",
		"Backup":        "unscoped",
		"SaveSnapshot":  "unscoped", // Backup's deprecated name
		"Plan":          "handler",
		// member.RequestQuery.Visible
		"GetRequestOutcome": "handler",
	}
	var names []string
	for _, m := range pb.MetadataService_ServiceDesc.Methods {
		names = append(names, m.MethodName)
	}
	for _, s := range pb.MetadataService_ServiceDesc.Streams {
		names = append(names, s.StreamName)
	}
	for _, name := range names {
		full := "/metalog.v1.MetadataService/" + name
		rule, ok := want[name]
		if !ok {
			t.Errorf("method %s has no scope rule in this test", name)
			continue
		}
		if _, ok := methodRoles[full]; !ok {
			t.Errorf("method %s has no role in methodRoles", name)
		}
		if _, unscoped := unscopedMethods[full]; unscoped != (rule == "unscoped") {
			t.Errorf("method %s: in unscopedMethods %v, want rule %s", name, unscoped, rule)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("the test has a rule for %s, which the service does not have", name)
	}
	for m := range unscopedMethods {
		if _, ok := methodRoles[m]; !ok {
			t.Errorf("%s in unscopedMethods has no role", m)
		}
	}
}

// scopeReason returns the reason of err's metalog ErrorInfo and its
// metadata.
func scopeReason(err error) (string, map[string]string) {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info.GetReason(), info.GetMetadata()
		}
	}
	return "", nil
}

// TestScopedOperator checks that a scoped operator is refused the
// methods that need the unscoped role (PermissionDenied with the SCOPE
// ErrorInfo, saying why), and that the unscoped operator, alone or beside
// a scoped grant, is not.
func TestScopedOperator(t *testing.T) {
	tokens := newTestTokens(t, "shopops "+HashToken("s-token")+" operator@shop,reader\n"+
		"ops "+HashToken("o-token")+" operator@shop,operator\n"+
		"shopddl "+HashToken("d-token")+" ddl@shop\n")
	a := newAuthenticator(AuthOptions{Enabled: true, Tokens: tokens})
	var refusals []string
	a.onRefusal = func(method, id string) { refusals = append(refusals, id) }
	as := func(tok string) context.Context {
		return tlsCtx(nil, grpcmd.Pairs("authorization", "Bearer "+tok))
	}
	for m, why := range unscopedMethods {
		_, err := a.authorize(as("s-token"), m, nil)
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("%s as operator@shop: %v", m, err)
		}
		want := shortMethod(m) + " needs role operator for every keyspace (" + why + "); token:shopops holds operator@shop,reader"
		if msg := status.Convert(err).Message(); msg != want {
			t.Errorf("%s: message %q, want %q", m, msg, want)
		}
		if reason, meta := scopeReason(err); reason != reasonScope || meta["method"] != shortMethod(m) {
			t.Errorf("%s: ErrorInfo %q %v, want %s", m, reason, meta, reasonScope)
		}
		if _, err := a.authorize(as("o-token"), m, nil); err != nil {
			t.Errorf("%s as the unscoped operator: %v", m, err)
		}
		if _, err := a.authorize(as("d-token"), m, nil); status.Code(err) != codes.PermissionDenied || strings.Contains(err.Error(), "every keyspace") {
			t.Errorf("%s as ddl@shop: %v, want the role refusal", m, err)
		}
	}
	if len(refusals) != 2*len(unscopedMethods) || refusals[0] == "" {
		t.Errorf("refusals logged: %q", refusals)
	}
	for _, m := range []string{"/metalog.v1.MetadataService/GetGuardrails", "/metalog.v1.MetadataService/ListMembers"} {
		if _, err := a.authorize(as("s-token"), m, nil); err != nil {
			t.Errorf("%s as reader: %v", m, err)
		}
	}
	if _, err := a.authorize(as("d-token"), "/metalog.v1.MetadataService/Execute", &pb.ExecuteRequest{}); err != nil {
		t.Errorf("Execute as ddl@shop: %v (the member limits its statements)", err)
	}
	// A keyspace override needs operator on that scope only.
	const setGuardrails = "/metalog.v1.MetadataService/SetGuardrails"
	for _, tc := range []struct {
		tok, keyspace string
		ok            bool
	}{
		{"s-token", "shop", true}, {"s-token", " shop ", true}, {"s-token", "other", false}, {"s-token", "shop*", false},
		{"s-token", "*", false}, {"s-token", "", false}, {"o-token", "other", true}, {"o-token", "tenant_*", true},
	} {
		ctx, err := a.authorize(as(tc.tok), setGuardrails, &pb.SetGuardrailsRequest{Keyspace: tc.keyspace})
		if (err == nil) != tc.ok {
			t.Errorf("SetGuardrails of keyspace %q as %s: %v, want allowed %v", tc.keyspace, tc.tok, err, tc.ok)
		}
		if err == nil && scopedOperator(ctx) != (tc.tok == "s-token") {
			t.Errorf("SetGuardrails of keyspace %q as %s: scopedOperator %v", tc.keyspace, tc.tok, scopedOperator(ctx))
		}
		if !tc.ok {
			if reason, _ := scopeReason(err); reason != reasonScope {
				t.Errorf("SetGuardrails of keyspace %q as %s: reason %q", tc.keyspace, tc.tok, reason)
			}
		}
	}
}

// TestOutOfScopeStatus checks the status of a member's scope refusal:
// PermissionDenied, its message, and the SCOPE ErrorInfo naming the
// keyspace and the grants.
func TestOutOfScopeStatus(t *testing.T) {
	grants, err := access.ParseGrants([]string{"ddl@shop"})
	if err != nil {
		t.Fatal(err)
	}
	err = toStatus(&mdata.StatementError{Position: 2, Total: 2, Err: &member.ScopeError{
		Statement: "CREATE TABLE", Object: "other.t", Keyspace: "other", Principal: "token:ci", Grants: grants}})
	const want = "statement 2 of 2: CREATE TABLE other.t: token:ci holds ddl@shop, not ddl on keyspace other; nothing of this request was applied"
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != want {
		t.Fatalf("%v", err)
	}
	if reason, meta := scopeReason(err); reason != reasonScope || meta["keyspace"] != "other" || meta["grants"] != "ddl@shop" {
		t.Fatalf("ErrorInfo %q %v", reason, meta)
	}
}

// TestScopedExecuteThroughServer runs a server with tokens: ddl@shop
// executes in shop, is refused in other (PermissionDenied with the SCOPE
// detail, dry run too, nothing applied), and the history shows the role
// it used; the unscoped ddl's changes show none.
func TestScopedExecuteThroughServer(t *testing.T) {
	_, c := tokenServer(t, "admin "+HashToken("a-token")+" ddl,reader\nci "+HashToken("c-token")+" ddl@shop,reader\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := grpcmd.AppendToOutgoingContext(ctx, "authorization", "Bearer a-token")
	ci := grpcmd.AppendToOutgoingContext(ctx, "authorization", "Bearer c-token")
	setup, err := c.Execute(admin, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", Atomic: true})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := c.Execute(ci, &pb.ExecuteRequest{Statements: "CREATE TABLE t (k int PRIMARY KEY)", Keyspace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		_, err = c.Execute(ci, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.t2 (k int PRIMARY KEY); CREATE TABLE other.t (k int PRIMARY KEY)", DryRun: dry})
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "statement 2 of 2: CREATE TABLE other.t: token:ci holds ddl@shop,reader, not ddl on keyspace other") {
			t.Fatalf("dry run %v: %v", dry, err)
		}
		if reason, meta := scopeReason(err); reason != reasonScope || meta["keyspace"] != "other" {
			t.Fatalf("ErrorInfo %q %v", reason, meta)
		}
	}
	h, err := c.History(admin, &pb.HistoryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range h.Events {
		got = append(got, fmt.Sprintf("%d %s %s %s", ev.Epoch, ev.Principal, ev.Role, ev.Kind))
	}
	want := []string{
		fmt.Sprintf("%d token:admin  CREATE KEYSPACE", setup.Epoch), fmt.Sprintf("%d token:admin  CREATE KEYSPACE", setup.Epoch),
		fmt.Sprintf("%d token:ci ddl@shop CREATE TABLE", ok.Epoch),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || h.Epoch != ok.Epoch {
		t.Fatalf("history at epoch %d:\n%s\nwant\n%s", h.Epoch, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
