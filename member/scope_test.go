package member

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

func grantsOf(t *testing.T, items ...string) access.Grants {
	t.Helper()
	gs, err := access.ParseGrants(items)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// TestScopedDDL checks what a scoped ddl may execute on a member: in its
// keyspaces only; a request with any statement outside is refused whole
// (PermissionDenied, naming the statement, the keyspace and the grants;
// nothing proposed, the epoch unchanged), by Execute and DryRun alike; the
// history records the scoped grant a change used.
func TestScopedDDL(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	ks := func(name string) string {
		return "CREATE KEYSPACE " + name + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
	}
	if _, err := m.Writes().Execute(ctx, Request{Statements: ks("shop") + ";" + ks("other") + ";" + ks("tenant_a") + ";" + ks("tenantb") +
		"; CREATE TABLE other.src (k int PRIMARY KEY)", Principal: "token:admin", Grants: grantsOf(t, "ddl")}); err != nil {
		t.Fatal(err)
	}
	shop := grantsOf(t, "ddl@shop", "reader")
	tenants := grantsOf(t, "ddl@tenant_*")
	allowed := []struct {
		req  Request
		role string
	}{
		{Request{Statements: "CREATE TABLE shop.a (k int PRIMARY KEY)", Grants: shop}, "ddl@shop"},
		{Request{Statements: "ALTER TABLE shop.a ADD v int; CREATE TABLE b (k int PRIMARY KEY)", Keyspace: "shop", Grants: shop}, "ddl@shop"},
		{Request{Statements: "USE shop; CREATE TYPE ty (x int)", Keyspace: "other", Grants: shop}, "ddl@shop"},
		{Request{Statements: "CREATE TABLE tenant_a.t (k int PRIMARY KEY); " + ks("tenant_new"), Grants: tenants}, "ddl@tenant_*"},
		{Request{Statements: "CREATE TABLE shop.c (k int PRIMARY KEY); CREATE TABLE tenant_a.c (k int PRIMARY KEY)",
			Grants: grantsOf(t, "ddl@tenant_*", "ddl@shop")}, "ddl@shop,ddl@tenant_*"},
		{Request{Statements: "CREATE TABLE tenantb.t (k int PRIMARY KEY)", Grants: grantsOf(t, "ddl@shop", "ddl")}, ""},
		{Request{Statements: "CREATE TABLE other.t (k int PRIMARY KEY)"}, ""}, // authentication off
	}
	for _, tc := range allowed {
		tc.req.Principal = "token:ci"
		if _, _, err := m.Writes().DryRun(ctx, tc.req); err != nil {
			t.Fatalf("dry run %q with %v: %v", tc.req.Statements, tc.req.Grants, err)
		}
		out, err := m.Writes().Execute(ctx, tc.req)
		if err != nil {
			t.Fatalf("%q with %v: %v", tc.req.Statements, tc.req.Grants, err)
		}
		recs, err := m.core.sm.History(out.Epoch-1, out.Epoch, 0)
		if err != nil || len(recs) != 1 || recs[0].Role != tc.role || recs[0].Principal != "token:ci" {
			t.Fatalf("%q: history %+v, %v; want role %q", tc.req.Statements, recs, err, tc.role)
		}
	}

	refused := []struct {
		req        Request
		outOfScope bool
		msg        string
	}{
		{Request{Statements: "CREATE TABLE other.t2 (k int PRIMARY KEY)", Grants: shop}, true,
			"CREATE TABLE other.t2: token:ci holds ddl@shop,reader, not ddl on keyspace other; nothing of this request was applied"},
		{Request{Statements: "CREATE TABLE shop.d (k int PRIMARY KEY); CREATE TABLE other.t (k int PRIMARY KEY)", Grants: shop, Atomic: true},
			true, "statement 2 of 2: CREATE TABLE other.t: token:ci holds ddl@shop,reader, not ddl on keyspace other"},
		{Request{Statements: "CREATE TABLE shop.d (k int PRIMARY KEY); CREATE TABLE t (k int PRIMARY KEY)", Keyspace: "other", Grants: shop},
			true, "statement 2 of 2: CREATE TABLE t: token:ci holds ddl@shop,reader, not ddl on keyspace other"},
		{Request{Statements: "CREATE TABLE shop.d LIKE other.src", Grants: shop}, true, "not ddl on keyspace other"},
		{Request{Statements: "CREATE MATERIALIZED VIEW shop.v AS SELECT * FROM other.src WHERE k IS NOT NULL PRIMARY KEY (k)", Grants: shop},
			true, "not ddl on keyspace other"},
		{Request{Statements: "USE other", Grants: shop}, true, "USE other: token:ci holds"},
		{Request{Statements: "USE other; CREATE TABLE shop.d (k int PRIMARY KEY)", Keyspace: "shop", Grants: shop}, true, "statement 1 of 2: USE other"},
		{Request{Statements: "DROP KEYSPACE other", Grants: shop}, true, "DROP KEYSPACE other: token:ci holds"},
		{Request{Statements: ks("shop2"), Grants: shop}, true, "not ddl on keyspace shop2"},
		{Request{Statements: "CREATE TABLE tenantb.t2 (k int PRIMARY KEY)", Grants: tenants}, true, "holds ddl@tenant_*, not ddl on keyspace tenantb"},
		{Request{Statements: "CREATE TABLE shop.d (k int PRIMARY KEY); CREATE TABLE d2 (k int PRIMARY KEY)", Grants: shop}, false,
			"statement 2 of 2: CREATE TABLE d2: no keyspace specified and no default keyspace"},
	}
	for _, tc := range refused {
		tc.req.Principal = "token:ci"
		epoch, commit := m.core.sm.Current().Epoch, m.core.node.Status().Commit
		for _, dry := range []bool{false, true} {
			var err error
			if dry {
				_, _, err = m.Writes().DryRun(ctx, tc.req)
			} else {
				var out metadata.Outcome
				out, err = m.Writes().Execute(ctx, tc.req)
				if len(out.Results) != 0 {
					t.Errorf("%q: refused with results %+v", tc.req.Statements, out.Results)
				}
			}
			if errors.Is(err, ErrOutOfScope) != tc.outOfScope || invalid(err) == tc.outOfScope || !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Errorf("%q (dry run %v): %v (%v); want out of scope %v containing %q", tc.req.Statements, dry, err, kinds(err), tc.outOfScope, tc.msg)
			}
		}
		if m.core.sm.Current().Epoch != epoch || m.core.node.Status().Commit != commit {
			t.Fatalf("%q: refused but proposed (epoch %d -> %d)", tc.req.Statements, epoch, m.core.sm.Current().Epoch)
		}
	}
	if _, ok := m.core.sm.Current().Schema.Table("shop", "d"); ok {
		t.Fatal("a refused request created shop.d")
	}
}

// TestCheckScopeMatchesModel checks the member's scope decision against a
// reference model written plainly here: for random grants (roles, exact
// and prefix scopes) and random requests of 1-4 statements of random
// kinds over random keyspaces (some unqualified, with a default keyspace
// or after a USE), the request is refused at the first statement that
// names a keyspace no ddl grant covers (or that names none, with no
// default), and otherwise allowed, recording grants that are held and
// cover what it touched.
func TestCheckScopeMatchesModel(t *testing.T) {
	keyspaces := []string{"shop", "shop2", "other", "tenant_a", "tenant_", "tenantb"}
	scopes := []string{"", "shop", "shop", "shop*", "tenant_*", "tenant_*", "t*", "tenant_a"}
	roles := []string{"ddl", "ddl", "ddl", "reader", "operator"} // ddl most often: it is the role checked
	// A statement template names up to two keyspaces: %[1]s is the first
	// one's "ks." (or nothing), %[2]s the second's; use is the USE
	// statement; base marks a view whose unqualified base is in the
	// view's keyspace (no second keyspace then).
	type template struct {
		text      string
		slots     int
		qualified bool // the keyspace is always named
		use, base bool
	}
	templates := []template{
		{text: "CREATE KEYSPACE %[1]s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", slots: 1, qualified: true},
		{text: "ALTER KEYSPACE %[1]s WITH durable_writes = false", slots: 1, qualified: true},
		{text: "DROP KEYSPACE IF EXISTS %[1]s", slots: 1, qualified: true},
		{text: "USE %[1]s", slots: 1, qualified: true, use: true},
		{text: "CREATE TABLE %[1]st (k int PRIMARY KEY, v int)", slots: 1},
		{text: "CREATE TABLE %[1]st2 LIKE %[2]st", slots: 2},
		{text: "ALTER TABLE %[1]st ADD w int", slots: 1},
		{text: "DROP TABLE IF EXISTS %[1]st", slots: 1},
		{text: "CREATE TYPE %[1]sty (a int)", slots: 1},
		{text: "ALTER TYPE %[1]sty ADD b int", slots: 1},
		{text: "DROP TYPE %[1]sty", slots: 1},
		{text: "CREATE INDEX ON %[1]st (v)", slots: 1},
		{text: "DROP INDEX %[1]si", slots: 1},
		{text: "CREATE TRIGGER tr ON %[1]st USING 'org.example.T'", slots: 1},
		{text: "DROP TRIGGER tr ON %[1]st", slots: 1},
		{text: "CREATE FUNCTION %[1]sf (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", slots: 1},
		{text: "DROP FUNCTION %[1]sf", slots: 1},
		{text: "CREATE AGGREGATE %[1]sagg (int) SFUNC f STYPE int", slots: 1},
		{text: "DROP AGGREGATE %[1]sagg", slots: 1},
		{text: "CREATE MATERIALIZED VIEW %[1]sv AS SELECT * FROM %[2]st WHERE k IS NOT NULL PRIMARY KEY (k)", slots: 2, base: true},
		{text: "ALTER MATERIALIZED VIEW %[1]sv WITH comment = 'x'", slots: 1},
		{text: "DROP MATERIALIZED VIEW %[1]sv", slots: 1},
	}
	// The statements that read a second keyspace, drawn three times as
	// often: theirs are the rules easiest to get wrong.
	for _, tp := range templates {
		if tp.slots == 2 || tp.use {
			templates = append(templates, tp, tp)
		}
	}
	// covers is the model of a grant's scope: empty is every keyspace, a
	// trailing '*' a prefix, anything else one keyspace.
	covers := func(scope, ks string) bool {
		if scope == "" {
			return true
		}
		if strings.HasSuffix(scope, "*") {
			return strings.HasPrefix(ks, strings.TrimSuffix(scope, "*"))
		}
		return scope == ks
	}
	rapid.Check(t, func(rt *rapid.T) {
		def := rapid.SampledFrom(append([]string{""}, keyspaces...)).Draw(rt, "default")
		n := rapid.IntRange(1, 4).Draw(rt, "statements")
		var texts []string
		var named [][]string // per statement, the keyspaces as the model resolves them
		use := ""
		for range n {
			tp := rapid.SampledFrom(templates).Draw(rt, "kind")
			var quals [2]string
			var resolved []string
			for s := range tp.slots {
				ks := rapid.SampledFrom(keyspaces).Draw(rt, "keyspace")
				if tp.qualified {
					quals[s] = ks
					resolved = append(resolved, ks)
					continue
				}
				if rapid.Bool().Draw(rt, "qualified") {
					quals[s] = ks + "."
					resolved = append(resolved, ks)
					continue
				}
				if s == 1 && tp.base {
					continue // the view's own keyspace
				}
				switch {
				case use != "":
					resolved = append(resolved, use)
				default:
					resolved = append(resolved, def) // "" when there is no default
				}
			}
			texts = append(texts, fmt.Sprintf(tp.text, quals[0], quals[1]))
			named = append(named, resolved)
			if tp.use {
				use = quals[0]
			}
		}
		parsed, err := cql.Parse(strings.Join(texts, ";\n"))
		if err != nil || len(parsed) != n {
			rt.Fatalf("parse %q: %v", texts, err)
		}

		check := func(items []string) {
			grants, err := access.ParseGrants(items)
			if err != nil {
				rt.Fatal(err)
			}
			// The model, for one grant set.
			unscoped := false
			for _, g := range items {
				unscoped = unscoped || g == "ddl"
			}
			wantPos, wantKeyspace := 0, ""
			if !unscoped {
			statements:
				for i, kss := range named {
					for _, ks := range kss {
						ok := false
						for _, g := range items {
							role, scope, _ := strings.Cut(g, "@")
							ok = ok || (role == "ddl" && ks != "" && covers(scope, ks))
						}
						if !ok {
							wantPos, wantKeyspace = i+1, ks
							break statements
						}
					}
				}
			}

			role, err := checkScope(parsed, def, "token:p", grants)
			if wantPos == 0 {
				if err != nil {
					rt.Fatalf("grants %v, default %q, %q: refused (%v); the model allows", items, def, texts, err)
				}
				if unscoped != (role == "") {
					rt.Fatalf("grants %v: role %q", items, role)
				}
				if role != "" {
					used := strings.Split(role, ",")
					for _, u := range used {
						if !strings.HasPrefix(u, "ddl@") || !strings.Contains(","+strings.Join(items, ",")+",", ","+u+",") {
							rt.Fatalf("role %q lists %q, which %v does not hold scoped", role, u, items)
						}
					}
					for _, kss := range named {
						for _, ks := range kss {
							ok := false
							for _, u := range used {
								ok = ok || covers(strings.TrimPrefix(u, "ddl@"), ks)
							}
							if !ok {
								rt.Fatalf("role %q covers no grant of keyspace %s", role, ks)
							}
						}
					}
				}
				return
			}
			var serr *metadata.StatementError
			if !errors.As(err, &serr) || serr.Position != wantPos || serr.Total != n || serr.Applied != 0 {
				rt.Fatalf("grants %v, default %q, %q: %v; the model refuses statement %d (keyspace %q)", items, def, texts, err, wantPos, wantKeyspace)
			}
			var scopeErr *ScopeError
			switch {
			case wantKeyspace == "":
				if !errors.Is(err, schema.ErrInvalid) || err.Error() != (&metadata.StatementError{Position: wantPos, Total: n, Err: schema.NoKeyspace(parsed[wantPos-1].Statement)}).Error() {
					rt.Fatalf("%q: %v, want the no-keyspace error of statement %d", texts, err, wantPos)
				}
			case !errors.As(err, &scopeErr) || scopeErr.Keyspace != wantKeyspace || !errors.Is(err, ErrOutOfScope) || invalid(err):
				rt.Fatalf("%q: %v, want statement %d refused for keyspace %s", texts, err, wantPos, wantKeyspace)
			}
		}
		// A random grant set, then each scope alone: a request's
		// decision is checked under many grants.
		var items []string
		for range rapid.IntRange(0, 3).Draw(rt, "grants") {
			g := rapid.SampledFrom(roles).Draw(rt, "role")
			if s := rapid.SampledFrom(scopes).Draw(rt, "scope"); s != "" {
				g += "@" + s
			}
			items = append(items, g)
		}
		check(items)
		for _, s := range scopes {
			check([]string{strings.TrimSuffix("ddl@"+s, "@")})
		}
	})
}
