package member

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/metadata"
)

const shopDDL = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

func execOK(t *testing.T, m *Member, req Request) metadata.Outcome {
	t.Helper()
	out, err := m.Writes().Execute(testContext(t), req)
	if err != nil {
		t.Fatalf("%s: %v", req.Statements, err)
	}
	return out
}

// feed runs a watch in the background and hands its messages to the test.
type feed struct {
	msgs   chan WatchMessage
	done   chan error
	cancel context.CancelFunc
}

func startFeed(t *testing.T, m *Member, q WatchQuery) *feed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &feed{msgs: make(chan WatchMessage, 100000), done: make(chan error, 1), cancel: cancel}
	go func() { f.done <- m.Reads().Watch(ctx, q, func(msg WatchMessage) error { f.msgs <- msg; return nil }) }()
	t.Cleanup(func() { f.stop(t) })
	return f
}

// next returns the next message, skipping progress messages unless
// progress is set.
func (f *feed) next(t *testing.T, progress bool) WatchMessage {
	t.Helper()
	for {
		select {
		case msg := <-f.msgs:
			if msg.Type == WatchProgress && !progress {
				continue
			}
			return msg
		case err := <-f.done:
			t.Fatalf("watch ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no watch message within 10s")
		}
	}
}

func (f *feed) stop(t *testing.T) {
	f.cancel()
	select {
	case err := <-f.done:
		f.done <- err
	case <-time.After(10 * time.Second):
		t.Error("watch did not end after its context was canceled")
	}
}

// eventsLines is one line per epoch of msg: the epoch and its events.
func eventsLines(msg WatchMessage) []string {
	var out []string
	for _, r := range msg.Records {
		var parts []string
		for _, e := range r.Events {
			parts = append(parts, strings.TrimSpace(e.Kind+" "+strings.Trim(e.Keyspace+"."+e.Table+"."+e.Name, ".")))
		}
		out = append(out, fmt.Sprintf("%d %s", r.Epoch, strings.Join(parts, ", ")))
	}
	return out
}

func uptr(v uint64) *uint64 { return &v }

func TestWatchFromAnEpochAndLive(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL, Principal: "token:ci"})
	execOK(t, m, Request{Statements: "CREATE TABLE shop.a (id int PRIMARY KEY, n int); CREATE INDEX an ON shop.a (n)"})
	all := startFeed(t, m, WatchQuery{From: uptr(0)})
	onlyA := startFeed(t, m, WatchQuery{From: uptr(1), Keyspace: "shop", Table: "a"})
	now := startFeed(t, m, WatchQuery{})
	if msg := now.next(t, true); msg.Type != WatchProgress || msg.Epoch != 3 {
		t.Fatalf("first message of a watch from now: %+v, want progress at epoch 3", msg)
	}
	execOK(t, m, Request{Statements: "CREATE TABLE shop.b (id int PRIMARY KEY); ALTER TABLE shop.a ADD v text", Atomic: true})
	execOK(t, m, Request{Statements: "DROP TABLE shop.b"})

	got := all.lines(t, 5)
	want := []string{"1 CREATE KEYSPACE shop", "2 CREATE TABLE shop.a", "3 CREATE INDEX shop.a.an", "4 CREATE TABLE shop.b, ALTER TABLE shop.a", "5 DROP TABLE shop.b"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("feed from 0:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g, w := strings.Join(onlyA.lines(t, 3), "\n"), "2 CREATE TABLE shop.a\n3 CREATE INDEX shop.a.an\n4 ALTER TABLE shop.a"; g != w {
		t.Fatalf("feed of shop.a:\n%s\nwant:\n%s", g, w)
	}
	if g, w := strings.Join(now.lines(t, 2), "\n"), "4 CREATE TABLE shop.b, ALTER TABLE shop.a\n5 DROP TABLE shop.b"; g != w {
		t.Fatalf("feed from now:\n%s\nwant:\n%s", g, w)
	}
}

// lines reads events messages until they hold n epochs, and returns one
// line per epoch. A message's epoch must be its last record's (the
// filters of these tests match the last epoch of every batch).
func (f *feed) lines(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		msg := f.next(t, false)
		if msg.Type != WatchEvents || len(msg.Records) == 0 || msg.Records[len(msg.Records)-1].Epoch > msg.Epoch {
			t.Fatalf("message %+v", msg)
		}
		out = append(out, eventsLines(msg)...)
	}
	return out
}

func TestWatchProgressWhileIdle(t *testing.T) {
	m := startMember(t, func(c *Config) { c.WatchProgressInterval = 50 * time.Millisecond })
	execOK(t, m, Request{Statements: shopDDL})
	f := startFeed(t, m, WatchQuery{From: uptr(1), Keyspace: "other"})
	execOK(t, m, Request{Statements: "CREATE TABLE shop.a (id int PRIMARY KEY)"})
	// Nothing matches: progress messages say where the member is.
	for {
		msg := f.next(t, true)
		if msg.Type != WatchProgress {
			t.Fatalf("unexpected %+v", msg)
		}
		if msg.Epoch == 2 {
			break
		}
	}
	if msg := f.next(t, true); msg.Type != WatchProgress || msg.Epoch != 2 {
		t.Fatalf("second progress message: %+v", msg)
	}
}

func TestWatchRefusesBadFilters(t *testing.T) {
	m := startMember(t, nil)
	err := m.Reads().Watch(testContext(t), WatchQuery{Table: "t"}, func(WatchMessage) error { return nil })
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "needs a keyspace") {
		t.Fatalf("table filter without a keyspace: %v", err)
	}
}

// blockedFeed is a watch whose consumer reads nothing until released.
func blockedFeed(t *testing.T, m *Member, from uint64) (release func(), msgs <-chan WatchMessage) {
	ctx, cancel := context.WithCancel(context.Background())
	gate := make(chan struct{})
	out := make(chan WatchMessage, 1<<17)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Reads().Watch(ctx, WatchQuery{From: &from}, func(msg WatchMessage) error {
			<-gate
			out <- msg
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() { close(gate) }, out
}

// alters applies n ALTER TABLE statements to shop.a, one epoch each, in
// requests of 1000.
func alters(t *testing.T, m *Member, n int) {
	for done := 0; done < n; {
		var b strings.Builder
		k := min(1000, n-done)
		for i := range k {
			fmt.Fprintf(&b, "ALTER TABLE shop.a WITH comment = 'c%d';", done+i)
		}
		execOK(t, m, Request{Statements: b.String()})
		done += k
	}
}

// collect reads the events and resyncs of msgs until epoch is covered.
func collect(t *testing.T, msgs <-chan WatchMessage, epoch uint64) []WatchMessage {
	t.Helper()
	var out []WatchMessage
	for {
		select {
		case msg := <-msgs:
			if msg.Type == WatchProgress {
				continue
			}
			out = append(out, msg)
			if msg.Epoch >= epoch {
				return out
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("feed stopped at %d messages, last %+v", len(out), out[len(out)-1])
		}
	}
}

func TestSlowWatcherGetsEveryEvent(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 5000
	}
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"})
	release, msgs := blockedFeed(t, m, 0)
	alters(t, m, n)
	end := m.core.sm.Current().Epoch
	release()
	got := collect(t, msgs, end)
	want := uint64(1)
	for i, msg := range got {
		if msg.Type != WatchEvents || len(msg.Records) > watchBatch {
			t.Fatalf("message %d: %s with %d epochs", i, msg.Type, len(msg.Records))
		}
		for _, r := range msg.Records {
			if r.Epoch != want {
				t.Fatalf("message %d: epoch %d, want %d", i, r.Epoch, want)
			}
			want++
		}
	}
	if want != end+1 {
		t.Fatalf("the feed ended at epoch %d, want %d", want-1, end)
	}
	// A feed that is behind catches up in batches: fewer messages than
	// epochs.
	if len(got) > int(end)/watchBatch+2 {
		t.Fatalf("%d messages for %d epochs, want batches of up to %d", len(got), end, watchBatch)
	}
}

func TestWatcherPastRetentionGetsOneResync(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 5000
	}
	m := startMember(t, func(c *Config) { c.HistoryRetention = uint64(n / 5) })
	execOK(t, m, Request{Statements: shopDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"})
	release, msgs := blockedFeed(t, m, 0)
	alters(t, m, n)
	end := m.core.sm.Current().Epoch
	release()
	alters(t, m, 10) // and then the rest
	got := collect(t, msgs, end+10)
	resyncs := 0
	want := uint64(1)
	for _, msg := range got {
		switch msg.Type {
		case WatchResync:
			resyncs++
			if !strings.Contains(msg.CQL, "CREATE TABLE shop.a") || msg.Epoch < want {
				t.Fatalf("resync at %d (next event due %d): %q", msg.Epoch, want, msg.CQL)
			}
			want = msg.Epoch + 1
		case WatchEvents:
			for _, r := range msg.Records {
				if r.Epoch != want {
					t.Fatalf("events of epoch %d, want %d", r.Epoch, want)
				}
				want++
			}
		}
	}
	if resyncs != 1 {
		t.Fatalf("%d resyncs, want 1", resyncs)
	}
}

func TestHistoryPages(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL, Principal: "token:ci"})
	for i := range 9 {
		execOK(t, m, Request{Statements: fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i)})
	}
	execOK(t, m, Request{Statements: "ALTER TABLE shop.t1 ADD v text; ALTER TABLE shop.t2 ADD v text", Atomic: true})
	ctx := testContext(t)
	page, err := m.Reads().History(ctx, HistoryQuery{From: uptr(0), Limit: 4})
	if err != nil || len(page.Records) != 4 || page.Next == nil || *page.Next != 4 || page.Epoch != 11 || page.Oldest != 1 {
		t.Fatalf("first page: %d records, next %v, epoch %d, oldest %d, %v", len(page.Records), page.Next, page.Epoch, page.Oldest, err)
	}
	if p := page.Records[0]; p.Principal != "token:ci" || p.Time == 0 || p.Events[0].Kind != "CREATE KEYSPACE" {
		t.Fatalf("first record: %+v", p)
	}
	var epochs []uint64
	for from := uint64(0); ; {
		page, err := m.Reads().History(ctx, HistoryQuery{From: &from, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			epochs = append(epochs, r.Epoch)
		}
		if page.Next == nil {
			break
		}
		from = *page.Next
	}
	if fmt.Sprint(epochs) != "[1 2 3 4 5 6 7 8 9 10 11]" {
		t.Fatalf("paged epochs %v", epochs)
	}
	// A page never splits an epoch: the atomic request's two events.
	if page, _ := m.Reads().History(ctx, HistoryQuery{From: uptr(10), Limit: 1}); len(page.Records) != 1 || len(page.Records[0].Events) != 2 {
		t.Fatalf("page of the atomic epoch: %+v", page.Records)
	}
	tail, err := m.Reads().History(ctx, HistoryQuery{Limit: 3})
	if err != nil || len(tail.Records) != 2 || tail.Records[0].Epoch != 10 || tail.Next != nil {
		t.Fatalf("newest 3 events: %+v, %v", tail.Records, err)
	}
	ranged, err := m.Reads().History(ctx, HistoryQuery{From: uptr(2), To: uptr(5), Keyspace: "shop", Table: "t2"})
	if err != nil || len(ranged.Records) != 1 || ranged.Records[0].Epoch != 4 {
		t.Fatalf("shop.t2 in (2, 5]: %+v, %v", ranged.Records, err)
	}
	for name, q := range map[string]HistoryQuery{
		"to before from":   {From: uptr(5), To: uptr(2)},
		"limit too large":  {Limit: MaxHistoryLimit + 1},
		"table without ks": {Table: "t1"},
	} {
		var ae *ArgumentError
		if _, err := m.Reads().History(ctx, q); !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
}

func TestHistoryPastRetentionIsOutOfRange(t *testing.T) {
	m := startMember(t, func(c *Config) { c.HistoryRetention = 3 })
	execOK(t, m, Request{Statements: shopDDL})
	for i := range 6 {
		execOK(t, m, Request{Statements: fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i)})
	}
	ctx := testContext(t)
	_, err := m.Reads().History(ctx, HistoryQuery{From: uptr(0)})
	var pruned *metadata.PrunedError
	if !errors.As(err, &pruned) || kinds(err) != "[metadata.ErrHistoryPruned]" || !strings.Contains(err.Error(), "the oldest epoch kept is 5") {
		t.Fatalf("history from 0 with 3 epochs kept of 7: %v", err)
	}
	_, err = m.Reads().ReadAt(ctx, 2, "", nil)
	if !errors.As(err, &pruned) || kinds(err) != "[metadata.ErrHistoryPruned]" || !strings.Contains(err.Error(), "at_epoch 2") || !strings.Contains(err.Error(), "oldest epoch kept is 5") {
		t.Fatalf("at epoch 2: %v", err)
	}
	if v, err := m.Reads().ReadAt(ctx, 4, "", nil); err != nil || v.Epoch != 4 || v.Schema.TableCount() != 3 {
		t.Fatalf("at epoch 4 (the oldest reachable): %v", err)
	}
}

func TestViewAtEveryEpoch(t *testing.T) {
	m := startMember(t, nil)
	var describe []string // the schema's DESCRIBE at each epoch
	capture := func() {
		describe = append(describe, filteredCQL(m.core.sm.Current().Schema, "", ""))
	}
	capture()
	for _, ddl := range []string{
		shopDDL,
		"CREATE TYPE shop.addr (street text)",
		"CREATE TABLE shop.a (id int PRIMARY KEY, home frozen<addr>, n int)",
		"CREATE INDEX an ON shop.a (n)",
		"ALTER TABLE shop.a ADD v text",
		"ALTER KEYSPACE shop WITH durable_writes = false",
		"DROP TABLE shop.a",
		"DROP KEYSPACE shop",
		shopDDL,
	} {
		execOK(t, m, Request{Statements: ddl})
		capture()
	}
	ctx := testContext(t)
	for epoch, want := range describe {
		v, err := m.Reads().ReadAt(ctx, uint64(epoch), "", nil)
		if err != nil {
			t.Fatalf("at epoch %d: %v", epoch, err)
		}
		if got := filteredCQL(v.Schema, "", ""); got != want {
			t.Fatalf("at epoch %d:\n%s\nwant:\n%s", epoch, got, want)
		}
	}
	// An epoch the cluster has not made is refused at once, naming both
	// epochs, whatever the deadline: the leader says the cluster is at 9.
	for _, consistency := range []string{"", Linearizable} {
		_, err := m.Reads().ReadAt(context.Background(), 99, consistency, nil)
		var ahead *EpochAheadError
		if kinds(err) != "[ErrEpochAhead]" || !errors.As(err, &ahead) || ahead.At != 99 || ahead.Epoch != 9 ||
			!strings.Contains(err.Error(), "at_epoch 99: the cluster is at epoch 9") {
			t.Fatalf("an epoch ahead (%q): %v, want OutOfRange naming epochs 99 and 9", consistency, err)
		}
	}
}

// TestEndFeedsEndsWatchesAtOnce: EndFeeds, the first step of a drain, ends
// the open feeds with Unavailable "shutting down" while the member still
// serves everything else, and refuses feeds opened after it.
func TestEndFeedsEndsWatchesAtOnce(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL})
	f := startFeed(t, m, WatchQuery{From: uptr(0)})
	if got := f.lines(t, 1); len(got) != 1 {
		t.Fatalf("feed before the drain: %v", got)
	}
	m.Reads().EndFeeds()
	m.Reads().EndFeeds() // a second call does nothing
	select {
	case err := <-f.done:
		f.done <- err
		var ue *UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "shutting down") {
			t.Fatalf("feed ended with %v, want Unavailable: shutting down", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not end after EndFeeds")
	}
	err := m.Reads().Watch(testContext(t), WatchQuery{From: uptr(0)}, func(WatchMessage) error {
		t.Error("a feed opened after EndFeeds sent a message")
		return nil
	})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a feed opened after EndFeeds: %v, want Unavailable", err)
	}
	execOK(t, m, Request{Statements: "CREATE TABLE shop.after (id int PRIMARY KEY)"})
}

// TestWatchBatchWindow: with a batch window, the first change after a
// quiet spell is struck at once, and the epochs applied within the window
// after it go out together at its end, one message per feed, read and
// encoded once for every feed with the same filter.
func TestWatchBatchWindow(t *testing.T) {
	waits := make(chan time.Duration, 10)
	ends := make(chan time.Time)
	m := startMember(t, func(c *Config) {
		c.WatchBatchWindow = time.Hour
		c.watchAfter = func(d time.Duration) <-chan time.Time { waits <- d; return ends }
	})
	var feeds []*feed
	for range 8 {
		feeds = append(feeds, startFeed(t, m, WatchQuery{}))
	}
	for _, f := range feeds {
		f.next(t, true) // the progress at epoch 0
	}
	execOK(t, m, Request{Statements: shopDDL})
	for _, f := range feeds {
		if g := strings.Join(f.lines(t, 1), "\n"); g != "1 CREATE KEYSPACE shop" {
			t.Fatalf("the first change after a quiet spell: %s", g)
		}
	}
	for i := range 5 {
		execOK(t, m, Request{Statements: fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i)})
	}
	waitWindow(t, m.Reads().pace, waits)
	if b := m.Reads().pace.current(); b.md.Epoch != 1 {
		t.Fatalf("changes within the window were struck at once, at epoch %d", b.md.Epoch)
	}
	ends <- time.Now()
	shared := map[*SharedEncoding]int{}
	for i, f := range feeds {
		msg := f.next(t, false)
		if msg.Epoch != 6 || len(msg.Records) != 5 || msg.Records[0].Epoch != 2 {
			t.Fatalf("feed %d: the window's message covers %v, want epochs 2 to 6 in one", i, eventsLines(msg))
		}
		shared[msg.Shared]++
	}
	if len(shared) != 1 {
		t.Fatalf("%d feeds were sent %d distinct messages for the same epochs, want one, encoded once", len(feeds), len(shared))
	}
	// A change within the window after that message waits for its end too.
	execOK(t, m, Request{Statements: "DROP TABLE shop.t0"})
	waitWindow(t, m.Reads().pace, waits)
	ends <- time.Now()
	for _, f := range feeds {
		if g := strings.Join(f.lines(t, 1), "\n"); g != "7 DROP TABLE shop.t0" {
			t.Fatalf("after the second window: %s", g)
		}
	}
}

// waitWindow waits until the pacer waits for its window to end, and
// checks the wait is within the window.
func waitWindow(t *testing.T, p *pacer, waits chan time.Duration) {
	t.Helper()
	select {
	case d := <-waits:
		if d <= 0 || d > p.window {
			t.Fatalf("the pacer waits for %v, beyond its window %v", d, p.window)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pacer did not wait for its window")
	}
}

// TestPacerIdleWithoutFeeds: with no feed the pacer strikes no beat (it
// does not wake on every publish for nobody); a feed that joins later
// gets every epoch from the one it asks for, and the beats follow the
// state again, also after that feed left and another joined.
func TestPacerIdleWithoutFeeds(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL})
	execOK(t, m, Request{Statements: "CREATE TABLE shop.t0 (id int PRIMARY KEY)"})
	if b := m.Reads().pace.current(); b.md.Epoch != 0 {
		t.Fatalf("the pacer struck a beat at epoch %d with no feed", b.md.Epoch)
	}
	f := startFeed(t, m, WatchQuery{From: uptr(0)})
	if g := strings.Join(f.lines(t, 2), "\n"); g != "1 CREATE KEYSPACE shop\n2 CREATE TABLE shop.t0" {
		t.Fatalf("a feed joining an idle pacer got:\n%s", g)
	}
	execOK(t, m, Request{Statements: "CREATE TABLE shop.t1 (id int PRIMARY KEY)"})
	if g := strings.Join(f.lines(t, 1), "\n"); g != "3 CREATE TABLE shop.t1" {
		t.Fatalf("the next change: %s", g)
	}
	f.stop(t)
	execOK(t, m, Request{Statements: "CREATE TABLE shop.t2 (id int PRIMARY KEY)"})
	g := startFeed(t, m, WatchQuery{From: uptr(3)})
	if got := strings.Join(g.lines(t, 1), "\n"); got != "4 CREATE TABLE shop.t2" {
		t.Fatalf("a second feed, after the first left: %s", got)
	}
}
