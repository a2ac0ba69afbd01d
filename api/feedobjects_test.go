package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// feedStatements make every kind of derived event on the keyspace ks of
// startServer, one epoch each.
var feedStatements = []string{
	"CREATE TYPE ks.addr (street text)",
	"CREATE TABLE ks.t (id int PRIMARY KEY, v text, w int, a frozen<addr>)",
	"CREATE INDEX ON ks.t (v)",
	"CREATE INDEX wi ON ks.t (w)",
	"CREATE TRIGGER audit ON ks.t USING 'org.example.Audit'",
	"CREATE MATERIALIZED VIEW ks.mv AS SELECT * FROM ks.t WHERE v IS NOT NULL AND id IS NOT NULL PRIMARY KEY (v, id)",
	"CREATE FUNCTION ks.plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;'",
	"CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int INITCOND 0",
	"CREATE TABLE ks.c LIKE ks.t WITH INDEXES",
	"ALTER TABLE ks.t ADD x int",
	"ALTER TYPE ks.addr ADD zip text",
	"CREATE TABLE ks.d LIKE ks.t WITH INDEXES",
	"DROP TABLE ks.c",
	"DROP KEYSPACE ks",
}

// enableFeatures turns on the guardrails that keep views and functions
// off by default.
func enableFeatures(t *testing.T, c pb.MetadataServiceClient) {
	t.Helper()
	_, err := c.SetGuardrails(context.Background(), &pb.SetGuardrailsRequest{Set: map[string]string{
		"materialized_views_enabled": "true", "user_defined_functions_enabled": "true",
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEventsCarryStructuredObjects: a mirror kept from the history's
// structured objects (client.Mirror) equals GetSchema's objects at every
// epoch through LIKE ... WITH INDEXES, an ALTER TABLE that reaches a
// view, an ALTER TYPE a column uses, DROP TABLE and DROP KEYSPACE; so does
// one kept from the watch. The index events of LIKE are derived events
// naming their statement, with the index GetSchema returns.
func TestEventsCarryStructuredObjects(t *testing.T) {
	_, c := startServer(t, 0)
	ctx := context.Background()
	enableFeatures(t, c)
	want := map[uint64]map[client.ObjectKey]*pb.SchemaObject{}
	start, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want[start.Epoch] = client.SchemaObjects(start.Keyspaces)
	var likeEpoch uint64
	for _, text := range feedStatements {
		resp, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: text})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		s, err := c.GetSchema(ctx, &pb.GetSchemaRequest{MinEpoch: resp.Epoch})
		if err != nil || s.Epoch != resp.Epoch {
			t.Fatalf("schema at %d: epoch %d, %v", resp.Epoch, s.GetEpoch(), err)
		}
		want[resp.Epoch] = client.SchemaObjects(s.Keyspaces)
		if strings.HasPrefix(text, "CREATE TABLE ks.c LIKE") {
			likeEpoch = resp.Epoch
			checkLikeEvents(t, c, resp.Epoch, s)
		}
	}

	page, err := c.History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(start.Epoch)})
	if err != nil {
		t.Fatal(err)
	}
	m := client.NewMirror(nil)
	m.Reset(start.Epoch, start.Keyspaces)
	for i, ev := range page.Events {
		if err := m.ApplyEvent(ev); err != nil {
			t.Fatal(err)
		}
		if i+1 < len(page.Events) && page.Events[i+1].Epoch == ev.Epoch {
			continue // the epoch's other events follow
		}
		if diff := m.Diff(want[ev.Epoch]); len(diff) > 0 {
			t.Errorf("epoch %d: the mirror kept from the history differs from GetSchema's: %v", ev.Epoch, diff)
		}
	}
	if m.Epoch() != page.Epoch || likeEpoch == 0 {
		t.Fatalf("the history's mirror is at epoch %d, the member at %d", m.Epoch(), page.Epoch)
	}
	checkCascadeObjects(t, page.Events)

	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	stream, err := c.Watch(wctx, &pb.WatchRequest{FromEpoch: proto.Uint64(start.Epoch)})
	if err != nil {
		t.Fatal(err)
	}
	wm := client.NewMirror(nil)
	wm.Reset(start.Epoch, start.Keyspaces)
	for wm.Epoch() < page.Epoch {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if err := wm.Apply(msg); err != nil {
			t.Fatal(err)
		}
	}
	if diff := wm.Diff(want[page.Epoch]); len(diff) > 0 || wm.Len() != 0 {
		t.Errorf("the watch's mirror at epoch %d (%d objects) differs from GetSchema's: %v", wm.Epoch(), wm.Len(), diff)
	}
}

// checkLikeEvents checks the events of CREATE TABLE ks.c LIKE ks.t WITH
// INDEXES at epoch: the table's, then a derived CREATE INDEX per index
// with the statement as its cause and the index of s (GetSchema's) as
// its after object.
func checkLikeEvents(t *testing.T, c pb.MetadataServiceClient, epoch uint64, s *pb.GetSchemaResponse) {
	t.Helper()
	page, err := c.History(context.Background(), &pb.HistoryRequest{FromEpoch: proto.Uint64(epoch - 1), ToEpoch: proto.Uint64(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	ev := page.Events
	const text = "CREATE TABLE ks.c LIKE ks.t WITH INDEXES"
	if len(ev) != 3 || ev[0].Kind != "CREATE TABLE" || ev[0].Statement != text || ev[0].Cause != nil ||
		ev[0].BeforeObject != nil || ev[0].AfterObject.GetTable().GetName() != "c" {
		t.Fatalf("LIKE's events: %v", ev)
	}
	indexes := map[string]*pb.Index{}
	for _, ix := range s.Keyspaces[0].Indexes {
		indexes[ix.Name] = ix
	}
	for i, name := range []string{"c_v_idx", "wi_1"} {
		e := ev[i+1]
		if e.Kind != "CREATE INDEX" || e.Table != "c" || e.Name != name || e.Statement != "" ||
			e.Cause.GetKind() != "CREATE TABLE" || e.Cause.GetStatement() != text || e.Cause.GetTable() != "c" ||
			e.BeforeObject != nil || !proto.Equal(e.AfterObject.GetIndex(), indexes[name]) || indexes[name] == nil ||
			!strings.HasPrefix(e.After, "CREATE INDEX "+name+" ON ks.c") {
			t.Errorf("LIKE's event %d: %v; GetSchema's index %v", i+1, e, indexes[name])
		}
	}
}

// TestWatchResyncCarriesSchema: a watch from an epoch the member no longer
// keeps starts with a resync that carries the schema structured beside
// the CQL: GetSchema's keyspaces for the whole feed; for a table's feed,
// the keyspace's own properties with the table and its indexes only. A
// mirror starts again from it and follows the events after it.
func TestWatchResyncCarriesSchema(t *testing.T) {
	_, c := startServerWith(t, func(s *testSettings) { s.member.HistoryRetention = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, text := range []string{
		"CREATE TABLE ks.t (id int PRIMARY KEY, v text)", "CREATE INDEX ON ks.t (v)",
		"CREATE TABLE ks.u (id int PRIMARY KEY)", "CREATE TYPE ks.ty (f int)", "ALTER TABLE ks.u ADD w int",
	} {
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: text}); err != nil {
			t.Fatal(err)
		}
	}
	s := waitPruned(ctx, t, c)
	for _, tc := range []struct {
		req  *pb.WatchRequest
		want []*pb.Keyspace
	}{
		{&pb.WatchRequest{FromEpoch: proto.Uint64(0)}, s.Keyspaces},
		{&pb.WatchRequest{FromEpoch: proto.Uint64(0), Keyspace: "ks"}, s.Keyspaces},
		{&pb.WatchRequest{FromEpoch: proto.Uint64(0), Keyspace: "ks", Table: "t"}, []*pb.Keyspace{{
			Name: "ks", ReplicationClass: s.Keyspaces[0].ReplicationClass, Replication: s.Keyspaces[0].Replication, DurableWrites: true,
			Tables: s.Keyspaces[0].Tables[:1], Indexes: s.Keyspaces[0].Indexes,
		}}},
	} {
		stream, err := c.Watch(ctx, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if msg.Type != "resync" || msg.Epoch != s.Epoch || len(msg.Keyspaces) != len(tc.want) {
			t.Fatalf("watch %v: first message %v", tc.req, msg)
		}
		for i := range tc.want {
			if !proto.Equal(msg.Keyspaces[i], tc.want[i]) {
				t.Errorf("watch %v: resync keyspace %v, want %v", tc.req, msg.Keyspaces[i], tc.want[i])
			}
		}
		m := client.NewMirror(tc.req)
		if err := m.Apply(msg); err != nil || m.Epoch() != s.Epoch {
			t.Fatalf("mirror of the resync: epoch %d, %v", m.Epoch(), err)
		}
		if tc.req.Table != "" && (m.Len() != 2 || m.Get(client.ObjectKey{Kind: client.ObjectIndex, Keyspace: "ks", Name: "t_v_idx"}) == nil) {
			t.Errorf("the table's mirror holds %v", m.Keys())
		}
	}
}

// waitPruned waits until the member's history no longer reaches epoch 1
// and returns the schema then.
func waitPruned(ctx context.Context, t *testing.T, c pb.MetadataServiceClient) *pb.GetSchemaResponse {
	t.Helper()
	for {
		page, err := c.History(ctx, &pb.HistoryRequest{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if page.OldestEpoch > 2 {
			s, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the history still starts at epoch %d", page.OldestEpoch)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkCascadeObjects checks, in the history of feedStatements, the
// structured objects of ALTER TYPE, of DROP TABLE's and of DROP
// KEYSPACE's events: the type before and after its new field, alone in
// its epoch (the table whose column uses it is unchanged); the table and
// then its indexes dropped; the keyspace's own properties, then every
// object it held, dependents first, each with its before object only.
func checkCascadeObjects(t *testing.T, events []*pb.Event) {
	t.Helper()
	byEpoch := map[uint64][]*pb.Event{}
	var alterType, dropTable, dropKeyspace uint64
	for _, ev := range events {
		byEpoch[ev.Epoch] = append(byEpoch[ev.Epoch], ev)
		if ev.Cause == nil {
			switch ev.Kind {
			case "ALTER TYPE":
				alterType = ev.Epoch
			case "DROP TABLE":
				dropTable = ev.Epoch
			case "DROP KEYSPACE":
				dropKeyspace = ev.Epoch
			}
		}
	}
	if evs := byEpoch[alterType]; len(evs) != 1 || len(evs[0].GetBeforeObject().GetType().GetFields()) != 1 ||
		len(evs[0].GetAfterObject().GetType().GetFields()) != 2 || evs[0].GetAfterObject().GetType().GetFields()[1].GetName() != "zip" {
		t.Errorf("ALTER TYPE's events: %v; want one, the type before and after its field zip", evs)
	}
	objects := func(epoch uint64) []string {
		var out []string
		for _, ev := range byEpoch[epoch] {
			k, _ := client.KeyOf(ev.GetBeforeObject())
			derived := ""
			if ev.GetCause() != nil {
				derived = " by " + ev.GetCause().GetKind()
			}
			if ev.AfterObject != nil {
				derived += " with an after object"
			}
			out = append(out, ev.Kind+" "+k.String()+derived)
		}
		return out
	}
	want := []string{"DROP TABLE table ks.c", "DROP INDEX index ks.c_v_idx by DROP TABLE", "DROP INDEX index ks.wi_1 by DROP TABLE"}
	if got := objects(dropTable); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("DROP TABLE's events: %q, want %q", got, want)
	}
	want = []string{"DROP KEYSPACE keyspace ks",
		"DROP INDEX index ks.d_v_idx by DROP KEYSPACE", "DROP INDEX index ks.t_v_idx by DROP KEYSPACE",
		"DROP INDEX index ks.wi by DROP KEYSPACE", "DROP INDEX index ks.wi_2 by DROP KEYSPACE",
		"DROP MATERIALIZED VIEW table ks.mv by DROP KEYSPACE",
		"DROP TABLE table ks.d by DROP KEYSPACE", "DROP TABLE table ks.t by DROP KEYSPACE",
		"DROP AGGREGATE function ks.total(int) by DROP KEYSPACE", "DROP FUNCTION function ks.plus(int,int) by DROP KEYSPACE",
		"DROP TYPE type ks.addr by DROP KEYSPACE"}
	if got := objects(dropKeyspace); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("DROP KEYSPACE's events:\n%q\nwant\n%q", got, want)
	}
}
