package integration

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// feedLikeSetup is a table with two indexes, one named by metalog and
// one by its statement, for CREATE TABLE ... LIKE ... WITH INDEXES to
// copy.
const feedLikeSetup = `CREATE KEYSPACE x WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE x.u (id int PRIMARY KEY, c text, d int);
CREATE INDEX ON x.u (c);
CREATE INDEX di ON x.u (d)`

// feedLike copies x.u with its indexes: t2_c_idx and di_1.
const feedLike = "CREATE TABLE x.t2 LIKE x.u WITH INDEXES"

// TestFeedShowsLikeIndexes: on a real member, the indexes CREATE TABLE
// ... LIKE ... WITH INDEXES copies are in the feed as events of their
// own, with structured objects, the same in history --json, watch --json
// and the Go client: after the statement's CREATE TABLE x.t2 (its
// columns, key and statement), a CREATE INDEX per index copied, with the
// index as GetSchema returns it and the statement as its cause; and DROP
// TABLE x.t2's DROP INDEX events bring them back out. A mirror the
// client keeps from the events equals GetSchema's objects at each epoch.
func TestFeedShowsLikeIndexes(t *testing.T) {
	s := newServer(t)
	s.start()
	if out, errOut, rc := s.cli("exec", "-e", feedLikeSetup); rc != 0 {
		t.Fatalf("exec: rc=%d %s %s", rc, out, errOut)
	}
	start := schemaNow(t, s, 0)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	watch := exec.CommandContext(ctx, binary, "watch", "--from-epoch", fmt.Sprint(start.Epoch), "--json", "--endpoints", s.grpcAddr)
	var watched, watchErr syncBuffer
	watch.Stdout, watch.Stderr = &watched, &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); watch.Wait() }()

	want := map[uint64]*pb.GetSchemaResponse{start.Epoch: start}
	var epochs []uint64 // of the LIKE, then of the DROP TABLE
	for _, stmt := range []string{feedLike, "DROP TABLE x.t2"} {
		if out, errOut, rc := s.cli("exec", "-e", stmt); rc != 0 {
			t.Fatalf("exec %s: rc=%d %s %s", stmt, rc, out, errOut)
		}
		now := schemaNow(t, s, start.Epoch+uint64(len(epochs))+1)
		want[now.Epoch] = now
		epochs = append(epochs, now.Epoch)
	}

	out, errOut, rc := s.cli("history", "--json", "--from-epoch", fmt.Sprint(start.Epoch))
	if rc != 0 {
		t.Fatalf("history --json: rc=%d %s", rc, errOut)
	}
	history := make([]*pb.Event, 0, 6)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		ev := new(pb.Event)
		if err := protojson.Unmarshal([]byte(line), ev); err != nil {
			t.Fatalf("history --json printed %q: %v", line, err)
		}
		history = append(history, ev)
	}
	checkLikeFeed(t, "history --json", history, epochs, want)

	watchedEvents := watchedUntil(t, &watched, &watchErr, epochs[1])
	checkLikeFeed(t, "watch --json", watchedEvents, epochs, want)
	checkFollowMirror(t, s, start, epochs, want)
}

// schemaNow returns the member's schema once it is at epoch min or past
// it.
func schemaNow(t *testing.T, s *server, min uint64) *pb.GetSchemaResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{MinEpoch: min})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// watchedUntil waits until watch --json has printed the message of epoch
// last, and returns the events of the messages it printed (progress
// messages have none).
func watchedUntil(t *testing.T, out, errOut *syncBuffer, last uint64) []*pb.Event {
	t.Helper()
	var events []*pb.Event
	waitFor(t, 30*time.Second, fmt.Sprintf("watch --json to print epoch %d", last), func() error {
		events = events[:0]
		reached := false
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.HasSuffix(line, "}") {
				continue // a line not yet whole
			}
			msg := new(pb.WatchResponse)
			if err := protojson.Unmarshal([]byte(line), msg); err != nil {
				return fmt.Errorf("watch --json printed %q: %v", line, err)
			}
			events = append(events, msg.Events...)
			reached = reached || client.WatchTypeOf(msg) == client.WatchEvents && msg.Epoch >= last
		}
		if !reached {
			return errors.New("printed so far: " + out.String() + errOut.String())
		}
		return nil
	})
	return events
}

// checkLikeFeed checks the events of the LIKE (epochs[0]) and of the DROP
// TABLE (epochs[1]) as source printed them: each statement's event with
// its statement and table, then a derived event per index (by name), whose object
// is the index GetSchema returns at (or before, for a drop) its epoch.
func checkLikeFeed(t *testing.T, source string, events []*pb.Event, epochs []uint64, want map[uint64]*pb.GetSchemaResponse) {
	t.Helper()
	type line struct{ Epoch, Kind, Object, Cause string }
	var got []line
	for _, ev := range events {
		l := line{Epoch: fmt.Sprint(ev.Epoch), Kind: ev.Kind, Cause: ev.GetCause().GetStatement()}
		obj := ev.GetAfterObject()
		schemaAt := want[ev.Epoch]
		if obj == nil {
			obj, schemaAt = ev.GetBeforeObject(), want[ev.Epoch-1]
		}
		switch {
		case obj.GetIndex() != nil:
			ix := obj.GetIndex()
			l.Object = fmt.Sprintf("index %s.%s on %s (%s)", ix.Keyspace, ix.Name, ix.Table, ix.Column)
			if !proto.Equal(ix, findIndex(schemaAt, ix.Name)) || ev.Statement != "" {
				t.Errorf("%s: %s %s: index %v, statement %q; want GetSchema's index %v and no statement", source, ev.Kind, ix.Name, ix, ev.Statement, findIndex(schemaAt, ix.Name))
			}
		case obj.GetTable() != nil:
			tb := obj.GetTable()
			l.Object = fmt.Sprintf("table %s.%s key %v, %d columns", tb.Keyspace, tb.Name, tb.PartitionKey, len(tb.Columns))
			if ev.Statement == "" || ev.Cause != nil {
				t.Errorf("%s: %s %s: statement %q, cause %v; want the statement's own event", source, ev.Kind, tb.Name, ev.Statement, ev.Cause)
			}
		}
		got = append(got, l)
	}
	e1, e2 := fmt.Sprint(epochs[0]), fmt.Sprint(epochs[1])
	wantLines := []line{
		{e1, "CREATE TABLE", "table x.t2 key [id], 3 columns", ""},
		{e1, "CREATE INDEX", "index x.di_1 on t2 (d)", feedLike},
		{e1, "CREATE INDEX", "index x.t2_c_idx on t2 (c)", feedLike},
		{e2, "DROP TABLE", "table x.t2 key [id], 3 columns", ""},
		{e2, "DROP INDEX", "index x.di_1 on t2 (d)", "DROP TABLE x.t2"},
		{e2, "DROP INDEX", "index x.t2_c_idx on t2 (c)", "DROP TABLE x.t2"},
	}
	if fmt.Sprint(got) != fmt.Sprint(wantLines) {
		t.Errorf("%s printed the events\n%v\nwant\n%v", source, got, wantLines)
	}
}

// findIndex returns index name of keyspace x in s, nil when it has none.
func findIndex(s *pb.GetSchemaResponse, name string) *pb.Index {
	for _, k := range s.GetKeyspaces() {
		for _, ix := range k.Indexes {
			if k.Name == "x" && ix.Name == name {
				return ix
			}
		}
	}
	return nil
}

// checkFollowMirror follows the feed from start with the Go client:
// the typed accessors give the copied indexes, and a client.Mirror
// started from start equals GetSchema's objects at each epoch.
func checkFollowMirror(t *testing.T, s *server, start *pb.GetSchemaResponse, epochs []uint64, want map[uint64]*pb.GetSchemaResponse) {
	t.Helper()
	c, err := client.New(client.Config{Endpoints: []string{s.grpcAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := &pb.WatchRequest{FromEpoch: proto.Uint64(start.Epoch)}
	m := client.NewMirror(req)
	m.Reset(start.Epoch, start.Keyspaces)
	var indexes []string
	for r := range c.Follow(ctx, req) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		evs := r.Response.Events // of one or more epochs
		for i, ev := range evs {
			if ix := ev.GetAfterObject().GetIndex(); ix != nil && ev.GetCause().GetKind() == "CREATE TABLE" {
				indexes = append(indexes, ix.Name+" on "+ix.Table)
			}
			if err := m.ApplyEvent(ev); err != nil {
				t.Fatal(err)
			}
			if i+1 < len(evs) && evs[i+1].Epoch == ev.Epoch {
				continue // the epoch's other events follow
			}
			if diff := m.Diff(client.SchemaObjects(want[ev.Epoch].GetKeyspaces())); len(diff) > 0 {
				t.Errorf("the client's mirror at epoch %d differs from GetSchema's: %v", ev.Epoch, diff)
			}
			k := client.ObjectKey{Kind: client.ObjectIndex, Keyspace: "x", Name: "t2_c_idx"}
			if ix := m.Get(k).GetIndex(); ev.Epoch == epochs[0] && (ix.GetTable() != "t2" || ix.GetColumn() != "c") {
				t.Errorf("the mirror's %s after the LIKE: %v", k, ix)
			}
		}
		if m.Epoch() >= epochs[1] {
			break
		}
	}
	if got := strings.Join(indexes, ", "); got != "di_1 on t2, t2_c_idx on t2" {
		t.Errorf("the client's typed accessors gave the indexes the LIKE copied as %q", got)
	}
}

// TestFeedMirrorThroughKillsAndResync: a consumer built only on client
// (Follow and Mirror) keeps an exact structured copy of the schema from
// epoch 0 on a 3-member cluster that keeps 8 epochs of history, while
// DDL that changes more than it names (LIKE ... WITH INDEXES, ALTER TABLE,
// DROP TABLE, DROP KEYSPACE) runs and the leader is killed twice: the feed
// starts with a resync carrying the structured schema, every later event's
// before_object is what the copy holds (Mirror checks it), and at the end
// the copy is what GetSchema returns at its epoch.
func TestFeedMirrorThroughKillsAndResync(t *testing.T) {
	c := newCluster(t, 3, "--history-retention-epochs", "8")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	eps := strings.Split(c.endpoints(), ",")
	cl, err := client.New(client.Config{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	setup := []string{ksRF3, "CREATE TABLE ks.base (id int PRIMARY KEY, v text, w int)", "CREATE INDEX ON ks.base (v)", "CREATE INDEX wi ON ks.base (w)"}
	for i := range 8 {
		setup = append(setup, fmt.Sprintf("CREATE TABLE ks.pre%d LIKE ks.base WITH INDEXES", i))
	}
	for _, stmt := range setup {
		if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: stmt}); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	waitFor(t, 30*time.Second, "every member to prune epoch 1", func() error {
		for i, s := range c.servers {
			page, err := s.client().History(ctx, &pb.HistoryRequest{Limit: 1})
			if err != nil || page.OldestEpoch <= 1 {
				return fmt.Errorf("member %d: oldest epoch %d, %v", i, page.GetOldestEpoch(), err)
			}
		}
		return nil
	})

	f := &feedFollower{t: t, req: &pb.WatchRequest{FromEpoch: proto.Uint64(0)}}
	f.mirror = client.NewMirror(f.req)
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	f.feed = cl.Follow(fctx, f.req)
	load := startFeedLoad(t, ctx, eps)
	for range 2 {
		f.until(f.mirror.Epoch() + 10)
		victim := c.leader()
		c.servers[victim].kill()
		f.until(f.mirror.Epoch() + 10)
		c.servers[victim].start()
	}
	load.stop()
	var last uint64
	for _, s := range c.servers {
		last = max(last, schemaNow(t, s, 0).Epoch)
	}
	f.until(last)
	now, err := cl.GetSchema(ctx, &pb.GetSchemaRequest{MinEpoch: f.mirror.Epoch()})
	if err != nil || now.Epoch != f.mirror.Epoch() {
		t.Fatalf("GetSchema at the mirror's epoch %d: epoch %d, %v", f.mirror.Epoch(), now.GetEpoch(), err)
	}
	if diff := f.mirror.Diff(client.SchemaObjects(now.Keyspaces)); len(diff) > 0 {
		t.Errorf("the mirror at epoch %d differs from GetSchema's: %v", now.Epoch, diff)
	}
	if f.resyncs == 0 || f.derived == 0 || load.acked.Load() == 0 {
		t.Errorf("%d resyncs, %d derived events, %d statements applied: want each at least one", f.resyncs, f.derived, load.acked.Load())
	}
}

// feedFollower applies the messages of a Follow to a Mirror.
type feedFollower struct {
	t       *testing.T
	req     *pb.WatchRequest
	feed    <-chan client.WatchResult
	mirror  *client.Mirror
	resyncs int // resync messages seen
	derived int // derived events seen
}

// until applies messages until the mirror is at epoch or past it.
func (f *feedFollower) until(epoch uint64) {
	f.t.Helper()
	for f.mirror.Epoch() < epoch {
		select {
		case r, ok := <-f.feed:
			if !ok || r.Err != nil {
				f.t.Fatalf("the feed ended at epoch %d: %v", f.mirror.Epoch(), r.Err)
			}
			if client.WatchTypeOf(r.Response) == client.WatchResync {
				f.resyncs++
			}
			for _, ev := range r.Response.Events {
				if ev.Cause != nil {
					f.derived++
				}
			}
			if err := f.mirror.Apply(r.Response); err != nil {
				f.t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			f.t.Fatalf("no message for 30s at epoch %d, waiting for %d", f.mirror.Epoch(), epoch)
		}
	}
}

// startFeedLoad runs, on one client of eps, DDL that changes more objects
// than it names, until stopped: a copy of ks.base with its indexes, a
// column added to it, the drop of the copy before, and now and then a
// keyspace with a table and an index, dropped whole. A statement that
// fails (a member killed under it, or one that depends on it) is left.
func startFeedLoad(t *testing.T, ctx context.Context, eps []string) *ddlLoad {
	l := &ddlLoad{stopc: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ddl, err := client.New(client.Config{Endpoints: eps, Timeout: 30 * time.Second})
		if err != nil {
			t.Error(err)
			return
		}
		defer ddl.Close()
		for i := 0; ; i++ {
			stmts := []string{
				fmt.Sprintf("CREATE TABLE ks.c%d LIKE ks.base WITH INDEXES", i),
				fmt.Sprintf("ALTER TABLE ks.c%d ADD x int", i),
				fmt.Sprintf("DROP TABLE IF EXISTS ks.c%d", i-1),
			}
			if i%4 == 3 {
				ks := fmt.Sprintf("k%d", i)
				stmts = append(stmts, strings.Replace(ksRF3, " ks ", " "+ks+" ", 1),
					"CREATE TABLE "+ks+".t (id int PRIMARY KEY, v text)", "CREATE INDEX ON "+ks+".t (v)", "DROP KEYSPACE "+ks)
			}
			for _, stmt := range stmts {
				select {
				case <-l.stopc:
					return
				default:
				}
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				if _, err := ddl.Execute(rctx, &pb.ExecuteRequest{Statements: stmt}); err == nil {
					l.acked.Add(1)
				}
				cancel()
			}
		}
	}()
	return l
}
