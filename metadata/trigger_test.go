package metadata

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/schema/describe"
)

// triggerDDL creates a table with an index and a trigger; a trigger lives
// in its table's record (schema.Table.Triggers).
const triggerDDL = ksDDL + `;
	CREATE TABLE shop.t (id int PRIMARY KEY, v text);
	CREATE INDEX by_v ON shop.t (v);
	CREATE TRIGGER audit ON shop.t USING 'org.apache.cassandra.triggers.AuditTrigger'`

// hasAudit reports whether m's shop.t has trigger audit.
func hasAudit(m *ClusterMetadata) bool {
	tbl, ok := m.Schema.Table("shop", "t")
	if !ok {
		return false
	}
	tr, ok := tbl.Trigger("audit")
	return ok && tr.Class == "org.apache.cassandra.triggers.AuditTrigger"
}

// TestTriggerSurvivesStoreAndSnapshot checks that a trigger is flushed to
// the store and read back by a reopened node, and that a snapshot carries
// it to another node, digest included.
func TestTriggerSurvivesStoreAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	if r := a.apply(Command{Text: triggerDDL}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	want := sm.Current()
	if !hasAudit(want) {
		t.Fatalf("no trigger after apply:\n%s", describe.Schema(want.Schema))
	}
	data, err := sm.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	defer re.Close()
	sameMetadata(t, want, re.Current())
	if !hasAudit(re.Current()) {
		t.Fatal("the reopened store lost the trigger")
	}

	dst, _ := openWith(t, Config{Dir: t.TempDir()})
	defer dst.Close()
	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	sameMetadata(t, want, dst.Current())
	if !hasAudit(dst.Current()) {
		t.Fatal("the restored snapshot lost the trigger")
	}
}

// TestTriggerHistoryEvents checks that CREATE and DROP TRIGGER record an
// event about the trigger and its table, whose Before and After show the
// change, and that the history's schema at each epoch is the one the
// node had then (Undo of the table's prior).
func TestTriggerHistoryEvents(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: triggerDDL})
	withTrigger := sm.Current()
	if r := a.apply(Command{Text: "DROP TRIGGER audit ON shop.t"}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	cur := sm.Current()
	recs, err := sm.History(0, cur.Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	var create, drop *Event
	for _, r := range recs {
		for i := range r.Events {
			switch e := &r.Events[i]; e.Kind {
			case "CREATE TRIGGER":
				create = e
			case "DROP TRIGGER":
				drop = e
			}
		}
	}
	if create == nil || drop == nil {
		t.Fatalf("no trigger events in %d records", len(recs))
	}
	for _, e := range []*Event{create, drop} {
		if e.Keyspace != "shop" || e.Table != "t" || e.Name != "audit" || !e.Matches("shop", "t") {
			t.Errorf("%s event about %s.%s %s", e.Kind, e.Keyspace, e.Table, e.Name)
		}
	}
	const line = "CREATE TRIGGER audit ON shop.t USING 'org.apache.cassandra.triggers.AuditTrigger';\n"
	if strings.Contains(create.Before(), line) || !strings.Contains(create.After(), line) {
		t.Errorf("CREATE TRIGGER event before:\n%s\nafter:\n%s", create.Before(), create.After())
	}
	if !strings.Contains(drop.Before(), line) || strings.Contains(drop.After(), line) {
		t.Errorf("DROP TRIGGER event before:\n%s\nafter:\n%s", drop.Before(), drop.After())
	}
	at, err := sm.SchemaAt(cur, withTrigger.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	if at.Digest() != withTrigger.Schema.Digest() {
		t.Errorf("the schema at epoch %d differs from the one the node had", withTrigger.Epoch)
	}
}
