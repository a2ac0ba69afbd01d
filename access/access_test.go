package access

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParseGrant(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Grant
		err  string
	}{
		{in: "ddl", want: Grant{Role: DDL}},
		{in: " reader ", want: Grant{Role: Reader}},
		{in: "ddl@shop", want: Grant{Role: DDL, Scope: "shop"}},
		{in: "operator@tenant_*", want: Grant{Role: Operator, Scope: "tenant_*"}},
		{in: "ddl@Shop_2", want: Grant{Role: DDL, Scope: "Shop_2"}},
		{in: "admin", err: `unknown role "admin"`},
		{in: "ddl@", err: `scope "": want a keyspace name`},
		{in: "ddl@*", err: `scope "*": want a keyspace name`},
		{in: "ddl@sh*op", err: `character '*' at 3`},
		{in: "ddl@a.b", err: `character '.' at 2`},
		{in: "ddl@shop@x", err: `character '@' at 5`},
	} {
		g, err := ParseGrant(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseGrant(%q) = %v, %v; want error containing %q", tc.in, g, err, tc.err)
			}
			continue
		}
		if err != nil || g != tc.want {
			t.Errorf("ParseGrant(%q) = %v, %v; want %v", tc.in, g, err, tc.want)
		}
		if g.String() != strings.TrimSpace(tc.in) {
			t.Errorf("String of %q = %q", tc.in, g.String())
		}
	}
}

func TestGrantsDecide(t *testing.T) {
	gs, err := ParseGrants([]string{"ddl@shop", "ddl@tenant_*", "reader", "ddl@shop"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 3 {
		t.Fatalf("duplicates kept: %v", gs)
	}
	for _, tc := range []struct {
		role Role
		ks   string
		want bool
	}{
		{DDL, "shop", true}, {DDL, "shop2", false}, {DDL, "tenant_a", true}, {DDL, "tenant_", true},
		{DDL, "tenantb", false}, {DDL, "other", false}, {Reader, "other", true}, {Operator, "shop", false},
	} {
		if got := gs.Allows(tc.role, tc.ks); got != tc.want {
			t.Errorf("Allows(%s, %s) = %v, want %v", tc.role, tc.ks, got, tc.want)
		}
	}
	if !gs.Has(DDL) || gs.Unscoped(DDL) || !gs.Unscoped(Reader) || gs.Has(Operator) {
		t.Errorf("Has/Unscoped wrong for %v", gs)
	}
	if gs.Visible(Reader) != nil {
		t.Error("an unscoped reader needs no filter")
	}
	if v := gs.Visible(DDL); v == nil || !v("tenant_x") || v("other") {
		t.Error("the ddl filter is wrong")
	}
	if g, _ := gs.For(DDL, "shop"); g.String() != "ddl@shop" {
		t.Errorf("For(ddl, shop) = %v", g)
	}
	more := append(gs, Grant{Role: DDL, Scope: "tenant_a*"}, Grant{Role: DDL, Scope: "tenant_a1"})
	if g, _ := more.For(DDL, "tenant_ab"); g.String() != "ddl@tenant_a*" {
		t.Errorf("For(ddl, tenant_ab) = %v, want the longest prefix", g)
	}
	if g, _ := more.For(DDL, "tenant_a1"); g.String() != "ddl@tenant_a1" {
		t.Errorf("For(ddl, tenant_a1) = %v, want the exact scope", g)
	}
	if g, _ := append(more, Grant{Role: DDL}).For(DDL, "shop"); g.String() != "ddl" {
		t.Errorf("For with an unscoped grant = %v", g)
	}
}

// TestWithinAgreesWithMatch checks Within against its meaning: a scope is
// within another when every keyspace name the first matches, the second
// matches too (names drawn from a small alphabet so that prefixes collide).
func TestWithinAgreesWithMatch(t *testing.T) {
	name := rapid.StringMatching(`[ab_]{0,4}`)
	scope := rapid.Custom(func(t *rapid.T) Scope {
		n := name.Draw(t, "name")
		if n == "" {
			n = "a" // ParseScope refuses empty names and a bare "*"
		}
		switch rapid.IntRange(0, 2).Draw(t, "form") {
		case 0:
			return All
		case 1:
			return Scope(n + "*")
		}
		return Scope(n)
	})
	rapid.Check(t, func(t *rapid.T) {
		inner, outer := scope.Draw(t, "inner"), scope.Draw(t, "outer")
		// Every name the inner scope matches is a witness candidate: all
		// names up to 6 characters of the alphabet, plus the scopes' own.
		want := true
		var names []string
		var gen func(prefix string, n int)
		gen = func(prefix string, n int) {
			names = append(names, prefix)
			if n == 0 {
				return
			}
			for _, c := range []string{"a", "b", "_"} {
				gen(prefix+c, n-1)
			}
		}
		gen("", 6)
		for _, ks := range names {
			if inner.Match(ks) && !outer.Match(ks) {
				want = false
				break
			}
		}
		if got := inner.Within(outer); got != want {
			t.Fatalf("Scope(%q).Within(%q) = %v, want %v", inner, outer, got, want)
		}
	})
}
