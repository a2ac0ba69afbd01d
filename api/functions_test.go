package api

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
)

// TestDescribeFunctionByName: GetTable in CQL format of a name that is no
// table but names functions prints every overload; without the CQL
// format, or for a name of nothing, it is NotFound.
func TestDescribeFunctionByName(t *testing.T) {
	m := shopView(t)
	m.Guardrails.UserDefinedFunctionsEnabled = true
	m, _, _, err := m.Apply(metadata.Command{Text: `CREATE FUNCTION shop.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;';
CREATE FUNCTION shop.f(a text) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return 1;'`}, 3)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := newTestService(&fakeMember{view: m})
	ctx := context.Background()
	r, err := svc.GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "f", Format: "cql"})
	if err != nil || strings.Count(r.GetCql(), "CREATE FUNCTION shop.f(") != 2 || r.GetTable() != nil {
		t.Fatalf("describe shop.f: %v\n%v", err, r)
	}
	if _, err := svc.GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "f"}); status.Code(err) != codes.NotFound {
		t.Errorf("shop.f without the CQL format: %v", err)
	}
	if _, err := svc.GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "g", Format: "cql"}); status.Code(err) != codes.NotFound {
		t.Errorf("shop.g: %v", err)
	}
}

// TestSchemaObjectsInTheStructuredForm: GetKeyspace without the CQL
// format carries functions and aggregates, triggers, column masks and
// what makes a table a materialized view.
func TestSchemaObjectsInTheStructuredForm(t *testing.T) {
	m := shopView(t)
	m.Guardrails.UserDefinedFunctionsEnabled = true
	m.Guardrails.DynamicDataMaskingEnabled = true
	m.Guardrails.MaterializedViewsEnabled = true
	m, _, _, err := m.Apply(metadata.Command{Text: `CREATE FUNCTION shop.plus(s int, v int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + v;';
CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int INITCOND 0;
CREATE TABLE shop.users (id int PRIMARY KEY, email text MASKED WITH mask_inner(1, null));
CREATE TRIGGER audit ON shop.users USING 'org.example.Audit';
CREATE MATERIALIZED VIEW shop.users_by_email AS SELECT * FROM shop.users WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id)`}, 3)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := newTestService(&fakeMember{view: m})
	r, err := svc.GetKeyspace(context.Background(), &pb.GetKeyspaceRequest{Keyspace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	ks := r.GetKeyspace()
	if len(ks.GetFunctions()) != 2 {
		t.Fatalf("functions %v", ks.GetFunctions())
	}
	add, total := ks.Functions[0], ks.Functions[1]
	if add.Kind != "function" || add.Signature != "plus(int,int)" || add.Language != "java" || add.Body != "return s + v;" ||
		!add.CalledOnNullInput || strings.Join(add.ArgNames, ",") != "s,v" || strings.Join(add.ArgTypes, ",") != "int,int" || add.ReturnType != "int" {
		t.Errorf("function %v", add)
	}
	if total.Kind != "aggregate" || total.StateFunc != "plus" || total.StateType != "int" || total.InitCond != "0" || total.FinalFunc != "" || total.ReturnType != "int" {
		t.Errorf("aggregate %v", total)
	}
	var users, byEmail *pb.Table
	for _, tb := range ks.Tables {
		switch tb.Name {
		case "users":
			users = tb
		case "users_by_email":
			byEmail = tb
		}
	}
	if v := byEmail.GetView(); v == nil || v.BaseTable != "users" || !v.IncludeAllColumns || v.WhereClause != "email IS NOT NULL AND id IS NOT NULL" || users.GetView() != nil {
		t.Errorf("view %v (of table %v)", byEmail, users.GetView())
	}
	if users == nil || len(users.Triggers) != 1 || users.Triggers[0].Name != "audit" || users.Triggers[0].Class != "org.example.Audit" {
		t.Fatalf("table users: %v", users)
	}
	if c := users.Columns[1]; c.Name != "email" || c.Mask != "system.mask_inner(1, null)" || users.Columns[0].Mask != "" {
		t.Errorf("columns %v", users.Columns)
	}
}
