package member

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

func ksDDL(name string) string {
	return "CREATE KEYSPACE " + name + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
}

func onlyShop(ks string) bool { return ks == "shop" }

func tenantsOnly(ks string) bool { return strings.HasPrefix(ks, "tenant_") }

// tenantMember is a member holding shop, other, tenant_a and tenantb with
// a table each, a guardrail change at epoch 5, and an atomic request at
// epoch 10 touching shop and other.
func tenantMember(t *testing.T, mod func(*Config)) *Member {
	m := startMember(t, mod)
	for _, ks := range []string{"shop", "other", "tenant_a", "tenantb"} {
		execOK(t, m, Request{Statements: ksDDL(ks)})
	}
	if _, _, err := m.Writes().SetGuardrails(testContext(t), "ops", "", map[string]string{"tables_warn_threshold": "50"}); err != nil {
		t.Fatal(err)
	}
	for _, ks := range []string{"shop", "other", "tenant_a", "tenantb"} {
		execOK(t, m, Request{Statements: "CREATE TABLE " + ks + ".t (id int PRIMARY KEY)"})
	}
	execOK(t, m, Request{Statements: "CREATE TABLE other.u (id int PRIMARY KEY); CREATE TABLE shop.u (id int PRIMARY KEY)", Atomic: true})
	return m
}

// TestReadsOfAScopedReader: Read and ReadAt with a predicate answer the
// schema of the visible keyspaces only, and with nil the published one.
func TestReadsOfAScopedReader(t *testing.T) {
	m := tenantMember(t, nil)
	ctx := testContext(t)
	all, err := m.Reads().Read(ctx, 0, Local, nil)
	if err != nil || all != m.core.sm.Current() {
		t.Fatalf("an unscoped view must be the published metadata: %v", err)
	}
	shop, err := m.Reads().Read(ctx, 0, Linearizable, onlyShop)
	if err != nil {
		t.Fatal(err)
	}
	if names := keyspaceNames(shop.Schema); names != "shop" || shop.Epoch != all.Epoch {
		t.Fatalf("shop's view: %s at %d", names, shop.Epoch)
	}
	if shop.Schema.Digest() != schema.ComputeDigest(shop.Schema) || shop.Schema.Digest() == all.Schema.Digest() {
		t.Fatal("the digest of shop's view must be that of shop alone")
	}
	if tenants, _ := m.Reads().Read(ctx, 0, Local, tenantsOnly); keyspaceNames(tenants.Schema) != "tenant_a" {
		t.Fatalf("tenant_*'s view: %s", keyspaceNames(tenants.Schema))
	}
	// At epoch 7 (shop.t and other.t exist), shop sees shop.t only; at the
	// current epoch too, through the same path.
	at, err := m.Reads().ReadAt(ctx, 7, Local, onlyShop)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe.Schema(at.Schema); at.Epoch != 7 || !strings.Contains(got, "CREATE TABLE shop.t") || strings.Contains(got, "other") || strings.Contains(got, "tenant") {
		t.Fatalf("shop at epoch 7:\n%s", got)
	}
	if now, _ := m.Reads().ReadAt(ctx, all.Epoch, Local, onlyShop); keyspaceNames(now.Schema) != "shop" {
		t.Fatalf("shop at the current epoch: %s", keyspaceNames(now.Schema))
	}
	if everything, _ := m.Reads().ReadAt(ctx, 7, Local, nil); keyspaceNames(everything.Schema) != "other,shop,tenant_a,tenantb" {
		t.Fatalf("everything at epoch 7: %s", keyspaceNames(everything.Schema))
	}
}

func keyspaceNames(s schema.Schema) string {
	var out []string
	for _, k := range s.Keyspaces() {
		out = append(out, k.Name)
	}
	return strings.Join(out, ",")
}

// historyLines is one line per event: the epoch, the kind and the object.
func historyLines(page HistoryPage) []string {
	return eventsLines(WatchMessage{Records: page.Records})
}

// TestHistoryOfAScopedReader: a scoped reader's history holds the events
// of its keyspaces and the cluster-level ones; pages of Limit visible
// events still cover every visible event once, in order.
func TestHistoryOfAScopedReader(t *testing.T) {
	m := tenantMember(t, nil)
	ctx := testContext(t)
	want := "1 CREATE KEYSPACE shop\n5 SET GUARDRAILS\n6 CREATE TABLE shop.t\n10 CREATE TABLE shop.u"
	page, err := m.Reads().History(ctx, HistoryQuery{From: uptr(0), Visible: onlyShop})
	if err != nil || strings.Join(historyLines(page), "\n") != want || page.Next != nil || page.Epoch != 10 {
		t.Fatalf("shop's history (%v):\n%s\nwant:\n%s", err, strings.Join(historyLines(page), "\n"), want)
	}
	var paged []string
	for from := uint64(0); ; {
		page, err := m.Reads().History(ctx, HistoryQuery{From: &from, Limit: 1, Visible: onlyShop})
		if err != nil {
			t.Fatal(err)
		}
		if page.Next != nil && len(page.Records) != 1 {
			t.Fatalf("a page of 1 from %d holds %d records and another page follows", from, len(page.Records))
		}
		paged = append(paged, historyLines(page)...)
		if page.Next == nil {
			break
		}
		from = *page.Next
	}
	if strings.Join(paged, "\n") != want {
		t.Fatalf("shop's history in pages of 1:\n%s", strings.Join(paged, "\n"))
	}
	tail, err := m.Reads().History(ctx, HistoryQuery{Limit: 2, Visible: tenantsOnly})
	if got := strings.Join(historyLines(tail), "\n"); err != nil || got != "5 SET GUARDRAILS\n8 CREATE TABLE tenant_a.t" {
		t.Fatalf("the newest 2 events tenant_* sees (%v):\n%s", err, got)
	}
	if page, _ := m.Reads().History(ctx, HistoryQuery{From: uptr(0), Keyspace: "other", Visible: onlyShop}); len(page.Records) != 0 {
		t.Fatalf("shop filtering on other: %v", historyLines(page))
	}
	if page, _ := m.Reads().History(ctx, HistoryQuery{From: uptr(0)}); len(historyLines(page)) != 10 || !strings.Contains(strings.Join(historyLines(page), "\n"), "10 CREATE TABLE other.u, CREATE TABLE shop.u") {
		t.Fatalf("the unscoped history: %v", historyLines(page))
	}
}

// TestWatchOfAScopedReader: a scoped reader's feed sends the events of its
// keyspaces and the cluster-level ones, its progress follows the member's
// epoch through the others' changes, and the predicate is asked once per
// event, never for the whole schema.
func TestWatchOfAScopedReader(t *testing.T) {
	m := tenantMember(t, func(c *Config) { c.WatchProgressInterval = 50 * time.Millisecond })
	var asked atomic.Int64
	counting := func(ks string) bool { asked.Add(1); return onlyShop(ks) }
	f := startFeed(t, m, WatchQuery{From: uptr(0), Visible: counting})
	if got, want := strings.Join(f.lines(t, 4), "\n"), "1 CREATE KEYSPACE shop\n5 SET GUARDRAILS\n6 CREATE TABLE shop.t\n10 CREATE TABLE shop.u"; got != want {
		t.Fatalf("shop's feed from 0:\n%s\nwant:\n%s", got, want)
	}
	for i := range 20 {
		execOK(t, m, Request{Statements: fmt.Sprintf("CREATE TABLE other.x%d (id int PRIMARY KEY)", i)})
	}
	execOK(t, m, Request{Statements: "ALTER TABLE shop.t ADD v text"})
	msg := f.next(t, false)
	if got := strings.Join(eventsLines(msg), "\n"); msg.Type != WatchEvents || got != "31 ALTER TABLE shop.t" || msg.Epoch != 31 {
		t.Fatalf("after 20 changes to other: %+v", msg)
	}
	// 31 events about a keyspace, each asked about once (the guardrail
	// change is about none): a walk of the keyspaces per event would ask
	// four times as often.
	if n := asked.Load(); n != 31 {
		t.Errorf("the predicate was asked %d times for 31 keyspace events", n)
	}

	idle := startFeed(t, m, WatchQuery{From: uptr(31), Keyspace: "other", Visible: onlyShop})
	execOK(t, m, Request{Statements: "CREATE TABLE other.y (id int PRIMARY KEY)"})
	execOK(t, m, Request{Statements: "CREATE TABLE shop.y (id int PRIMARY KEY)"})
	for {
		msg := idle.next(t, true)
		if msg.Type != WatchProgress {
			t.Fatalf("a feed of other for shop sent %+v", msg)
		}
		if msg.Epoch == 33 {
			break
		}
	}
}

// TestWatchResyncOfAScopedReader: the resync of a scoped reader's feed
// describes its keyspaces only.
func TestWatchResyncOfAScopedReader(t *testing.T) {
	m := tenantMember(t, func(c *Config) { c.HistoryRetention = 3 })
	f := startFeed(t, m, WatchQuery{From: uptr(0), Visible: onlyShop})
	msg := f.next(t, false)
	if msg.Type != WatchResync || !strings.Contains(msg.CQL, "CREATE TABLE shop.u") || strings.Contains(msg.CQL, "other") || strings.Contains(msg.CQL, "tenant") {
		t.Fatalf("shop's resync: %+v", msg)
	}
	if all := startFeed(t, m, WatchQuery{From: uptr(0)}).next(t, false); all.Type != WatchResync || !strings.Contains(all.CQL, "CREATE TABLE other.u") {
		t.Fatalf("the unscoped resync: %+v", all)
	}
}

// TestPlanOfAScopedReader: a scoped reader's plan starts from its view: a
// keyspace it cannot see is planned as new, Prune drops nothing outside
// the view, and the digest is the view's after the plan.
func TestPlanOfAScopedReader(t *testing.T) {
	m := tenantMember(t, nil)
	ctx := testContext(t)
	desired := ksDDL("shop") + "; CREATE TABLE shop.t (id int PRIMARY KEY); " + ksDDL("other") + "; CREATE TABLE other.t (id int PRIMARY KEY)"
	p, err := m.Writes().Plan(ctx, PlanRequest{Desired: desired, Keyspaces: []string{"shop", "other"}, Prune: true, Visible: onlyShop})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Statements, "\n"); !strings.Contains(got, "DROP TABLE shop.u") || !strings.Contains(got, "CREATE KEYSPACE other") ||
		!strings.Contains(got, "CREATE TABLE other.t") || strings.Contains(got, "other.u") || strings.Contains(got, "tenant") {
		t.Fatalf("shop's plan:\n%s", got)
	}
	// The whole cluster's plan knows other exists.
	all, err := m.Writes().Plan(ctx, PlanRequest{Desired: desired, Keyspaces: []string{"shop", "other"}, Prune: true})
	if err != nil || strings.Contains(strings.Join(all.Statements, "\n"), "CREATE KEYSPACE other") || !strings.Contains(strings.Join(all.Statements, "\n"), "DROP TABLE other.u") {
		t.Fatalf("the unscoped plan (%v):\n%s", err, strings.Join(all.Statements, "\n"))
	}
	// Applied (shop's part), shop's view has the digest the plan said.
	execOK(t, m, Request{Statements: "DROP TABLE shop.u"})
	shopPlan, err := m.Writes().Plan(ctx, PlanRequest{Desired: ksDDL("shop") + "; CREATE TABLE shop.t (id int PRIMARY KEY)", Visible: onlyShop})
	if err != nil || len(shopPlan.Statements) != 0 {
		t.Fatalf("shop's plan once applied: %+v, %v", shopPlan, err)
	}
	view, _ := m.Reads().Read(ctx, 0, Local, onlyShop)
	if shopPlan.Digest != view.Schema.Digest() {
		t.Fatal("the digest of a scoped plan must be its view's")
	}
}
