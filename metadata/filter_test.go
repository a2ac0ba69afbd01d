package metadata

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/schema/cql"
)

// tenantHistory applies, to a new state machine: shop, tenant_a, tenantb
// and their tables, a guardrail change, and an atomic request that
// touches shop and tenant_a at once.
func tenantHistory(t *testing.T) *StateMachine {
	sm := openSM(t, t.TempDir())
	t.Cleanup(func() { sm.Close() })
	a := &applier{t: t, sm: sm}
	ks := func(name string) string {
		return "CREATE KEYSPACE " + name + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
	}
	g := setGuardrails(t, "tables_warn_threshold", "50")
	for i, r := range a.apply(
		Command{Text: ks("shop")},                            // 1
		Command{Text: ks("tenant_a") + "; " + ks("tenantb")}, // 2, 3
		Command{Text: "CREATE TABLE shop.t (id int PRIMARY KEY); CREATE TABLE tenantb.t (id int PRIMARY KEY)"}, // 4, 5
		g, // 6
		Command{Text: "CREATE TABLE tenant_a.t (id int PRIMARY KEY); CREATE TABLE shop.u (id int PRIMARY KEY)", Atomic: true}, // 7
	) {
		if r.Err != nil {
			t.Fatalf("command %d: %v", i+1, r.Err)
		}
	}
	return sm
}

func eventNames(recs []*Record) string {
	var out []string
	for _, r := range recs {
		for _, e := range r.Events {
			out = append(out, strings.TrimRight(fmt.Sprintf("%d %s %s.%s", r.Epoch, e.Kind, e.Keyspace, e.Table), ". "))
		}
	}
	return strings.Join(out, "\n")
}

func TestEventFilterVisible(t *testing.T) {
	sm := tenantHistory(t)
	recs, err := sm.History(0, sm.Current().Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	shop := func(ks string) bool { return ks == "shop" }
	tenants := func(ks string) bool { return strings.HasPrefix(ks, "tenant_") }
	filter := func(f EventFilter) []*Record {
		var out []*Record
		for _, r := range recs {
			if k, ok := r.Filter(f); ok {
				out = append(out, k)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    EventFilter
		want string
	}{
		{"shop", EventFilter{Visible: shop}, "1 CREATE KEYSPACE shop\n4 CREATE TABLE shop.t\n6 SET GUARDRAILS\n7 CREATE TABLE shop.u"},
		{"tenant_*", EventFilter{Visible: tenants}, "2 CREATE KEYSPACE tenant_a\n6 SET GUARDRAILS\n7 CREATE TABLE tenant_a.t"},
		{"shop, filtered on shop.u", EventFilter{Keyspace: "shop", Table: "u", Visible: shop}, "7 CREATE TABLE shop.u"},
		{"shop, filtered on an invisible keyspace", EventFilter{Keyspace: "tenantb", Visible: shop}, ""},
		{"nothing visible", EventFilter{Visible: func(string) bool { return false }}, "6 SET GUARDRAILS"},
	} {
		if diff := cmp.Diff(tc.want, eventNames(filter(tc.f))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		tail, err := sm.HistoryTail(sm.Current().Epoch, 100, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, eventNames(tail)); diff != "" {
			t.Errorf("%s, HistoryTail (-want +got):\n%s", tc.name, diff)
		}
	}
	// Kept whole, a record is not copied; split, it is, and the original
	// keeps its events.
	atomic := recs[len(recs)-1]
	if k, _ := atomic.Filter(EventFilter{}); k != atomic {
		t.Error("the zero filter copied a record")
	}
	if k, _ := atomic.Filter(EventFilter{Visible: func(string) bool { return true }}); k != atomic {
		t.Error("a filter keeping every event copied the record")
	}
	if k, _ := atomic.Filter(EventFilter{Visible: shop}); k == atomic || len(k.Events) != 1 || len(atomic.Events) != 2 {
		t.Errorf("split record: %d events, original %d", len(k.Events), len(atomic.Events))
	}
	// The tail of 2 visible events reaches back past invisible ones.
	tail, _ := sm.HistoryTail(sm.Current().Epoch, 2, EventFilter{Visible: tenants})
	if got := eventNames(tail); got != "6 SET GUARDRAILS\n7 CREATE TABLE tenant_a.t" {
		t.Errorf("tail of 2 for tenant_*:\n%s", got)
	}
}

func TestClusterMetadataVisible(t *testing.T) {
	sm := tenantHistory(t)
	cur := sm.Current()
	if cur.Visible(nil) != cur {
		t.Fatal("a nil filter must return the metadata itself")
	}
	v := cur.Visible(func(ks string) bool { return ks == "shop" })
	if v.Epoch != cur.Epoch || v.Guardrails.Values()[0] != cur.Guardrails.Values()[0] || v.Schema.KeyspaceCount() != 1 || v.Schema.TableCount() != 2 {
		t.Fatalf("shop's view: epoch %d, %d keyspaces, %d tables", v.Epoch, v.Schema.KeyspaceCount(), v.Schema.TableCount())
	}
	if cur.Schema.KeyspaceCount() != 3 {
		t.Fatal("Visible changed the published metadata")
	}
	// A dry run on the view sees only shop: CREATE KEYSPACE tenantb
	// passes there, as if tenantb did not exist.
	text := "CREATE KEYSPACE tenantb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
	stmts, err := cql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := v.DryRun(Command{Text: text}, stmts); err != nil || len(out.Results) != 1 || !out.Results[0].Result.Applied {
		t.Fatalf("dry run of CREATE KEYSPACE tenantb on shop's view: %+v, %v", out, err)
	}
}

// TestEventFilterScopedGuardrails: a change of a per-keyspace override is
// seen by the readers whose scopes hold its scope, and by no other scoped
// reader; unscoped readers see every one.
func TestEventFilterScopedGuardrails(t *testing.T) {
	sm := openSM(t, t.TempDir())
	t.Cleanup(func() { sm.Close() })
	a := &applier{t: t, sm: sm}
	for i, r := range a.apply(
		setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "5"),       // 1
		setKeyspaceGuardrails(t, "tenant_*", "tables_fail_threshold", "5"),   // 2
		setKeyspaceGuardrails(t, "tenant_a", "tables_fail_threshold", "5"),   // 3
		setKeyspaceGuardrails(t, "*", "tables_fail_threshold", "5"),          // 4
		setKeyspaceGuardrails(t, "tenant_ab*", "tables_fail_threshold", "5"), // 5
	) {
		if r.Err != nil {
			t.Fatalf("command %d: %v", i+1, r.Err)
		}
	}
	recs, err := sm.History(0, sm.Current().Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := func(visible func(string) bool) string {
		var out []string
		for _, r := range recs {
			if k, ok := r.Filter(EventFilter{Visible: visible}); ok {
				out = append(out, k.Events[0].Scope())
			}
		}
		return strings.Join(out, " ")
	}
	prefix := func(p string) func(string) bool {
		return func(ks string) bool { return strings.HasPrefix(ks, p) }
	}
	for _, tc := range []struct {
		name    string
		visible func(string) bool
		want    string
	}{
		{"unscoped", nil, "shop tenant_* tenant_a * tenant_ab*"},
		{"shop", func(ks string) bool { return ks == "shop" }, "shop"},
		{"tenant_*", prefix("tenant_"), "tenant_* tenant_a tenant_ab*"},
		{"tenant_a", func(ks string) bool { return ks == "tenant_a" }, "tenant_a"},
	} {
		if got := seen(tc.visible); got != tc.want {
			t.Errorf("%s sees %q, want %q", tc.name, got, tc.want)
		}
	}
}
