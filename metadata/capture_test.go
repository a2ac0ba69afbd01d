package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
	"github.com/metalog/metalog/snapshot"
)

// richDDL uses every kind of object the store and the snapshot hold.
const richDDL = ksDDL + `;
	CREATE KEYSPACE other WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3};
	CREATE TYPE shop.address (street text, city text);
	CREATE TABLE shop.users (id uuid PRIMARY KEY, home frozen<address>, tags set<text>, n int, old int);
	CREATE INDEX ON shop.users (n);
	CREATE INDEX tag_idx ON shop.users (values(tags));
	ALTER TABLE shop.users DROP old;
	CREATE TABLE other.events (day date, at timeuuid, v text, PRIMARY KEY (day, at)) WITH CLUSTERING ORDER BY (at DESC) AND comment = 'events'`

// richSM returns a state machine with richDDL and a few remembered
// requests, one of them failed, and the results of those requests.
func richSM(t *testing.T, cfg Config) (*StateMachine, *applier, []Result) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	sm, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, sm: sm}
	res := a.apply(
		Command{RequestID: "setup", Text: richDDL},
		Command{RequestID: "ok", Keyspace: "shop", Text: "CREATE TABLE orders (id int PRIMARY KEY, v text)"},
		Command{RequestID: "bad", Text: "DROP TABLE shop.nope"},
		Command{Text: "CREATE TABLE shop.anonymous (id int PRIMARY KEY)"},
	)
	for i, r := range res {
		if (r.Err != nil) != (i == 2) {
			t.Fatalf("setup command %d: %v", i, r.Err)
		}
	}
	return sm, a, res
}

// sameMetadata compares everything a snapshot carries.
func sameMetadata(t *testing.T, want, got *ClusterMetadata) {
	t.Helper()
	if got.Epoch != want.Epoch || got.Index != want.Index {
		t.Fatalf("epoch/index %d/%d, want %d/%d", got.Epoch, got.Index, want.Epoch, want.Index)
	}
	if got.Schema.Digest() != want.Schema.Digest() || schema.ComputeDigest(got.Schema) != want.Schema.Digest() {
		t.Fatalf("schema digest %x, want %x", got.Schema.Digest(), want.Schema.Digest())
	}
	if d := cmp.Diff(describe.Schema(want.Schema), describe.Schema(got.Schema)); d != "" {
		t.Fatalf("schema (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want.Requests.IDs(), got.Requests.IDs()); d != "" {
		t.Fatalf("request ids (-want +got):\n%s", d)
	}
	for _, id := range want.Requests.IDs() {
		w, _ := want.Requests.Get(id)
		g, ok := got.Requests.Get(id)
		if !ok || !cmp.Equal(w, g, cmp.Comparer(sameError)) {
			t.Fatalf("request %q: %+v, want %+v", id, g, w)
		}
	}
}

func TestCaptureRestoreRoundTrip(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			src, a, first := richSM(t, Config{FlushWindow: window})
			defer src.Close()
			want := src.Current()
			data, err := src.Capture(a.index)()
			if err != nil {
				t.Fatal(err)
			}

			dir := t.TempDir()
			dst, _ := openWith(t, Config{Dir: dir, FlushWindow: window})
			if err := dst.Restore(a.index, data); err != nil {
				t.Fatal(err)
			}
			sameMetadata(t, want, dst.Current())

			// Retried request ids get the original answers.
			b := &applier{t: t, sm: dst, index: a.index}
			again := b.apply(
				Command{RequestID: "ok", Keyspace: "shop", Text: "CREATE TABLE orders (id int PRIMARY KEY, v text)"},
				Command{RequestID: "bad", Text: "DROP TABLE shop.nope"},
			)
			if d := cmp.Diff(first[1].Outcome, again[0].Outcome, ignoreTexts); d != "" || again[0].Err != nil {
				t.Fatalf("retry after restore (-first +retry):\n%s err %v", d, again[0].Err)
			}
			if again[1].Err == nil || again[1].Err.Error() != first[2].Err.Error() || !errors.Is(again[1].Err, schema.ErrNotFound) {
				t.Fatalf("failed retry after restore: %v, first %v", again[1].Err, first[2].Err)
			}
			if dst.Current().Epoch != want.Epoch {
				t.Fatalf("retries changed the epoch: %d, want %d", dst.Current().Epoch, want.Epoch)
			}
			// New commands go on from the snapshot.
			if r := b.apply(Command{Text: "CREATE TABLE shop.after (id int PRIMARY KEY)"}); r[0].Err != nil || r[0].Outcome.Epoch != want.Epoch+1 {
				t.Fatalf("command after restore: %+v", r[0])
			}
			after := dst.Current()
			if err := dst.Close(); err != nil {
				t.Fatal(err)
			}

			// The store was rewritten: a reopened node has the same state.
			re := openSM(t, dir)
			defer re.Close()
			sameMetadata(t, after, re.Current())
		})
	}
}

// TestRestoreReplacesEverything restores over a node that has its own
// flushed and pending state: none of it may survive, in memory or on disk.
func TestRestoreReplacesEverything(t *testing.T) {
	src, a, _ := richSM(t, Config{})
	defer src.Close()
	want := src.Current()
	data, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	dst, m := openWith(t, Config{Dir: dir, FlushWindow: time.Hour})
	b := &applier{t: t, sm: dst}
	b.apply(Command{RequestID: "mine", Text: "CREATE KEYSPACE mine WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE mine.flushed (id int PRIMARY KEY)"})
	if err := dst.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	// Pending only (the window is an hour): a type, a table, a request,
	// and a table in the snapshot's keyspace that the snapshot lacks.
	b.apply(Command{RequestID: "pending", Text: ksDDL + "; CREATE TYPE shop.pt (x int); CREATE TABLE shop.pending (id int PRIMARY KEY); CREATE TABLE mine.pending (id int PRIMARY KEY)"})
	if testutil.ToFloat64(m.pending) == 0 {
		t.Fatal("test setup: nothing pending")
	}
	flushes := testutil.ToFloat64(m.flushes)
	for i := range 20 { // more than the snapshot index, so Index goes back
		b.apply(Command{Text: fmt.Sprintf("CREATE TABLE mine.t%d (id int PRIMARY KEY)", i)})
	}

	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	sameMetadata(t, want, dst.Current())
	if got := testutil.ToFloat64(m.pending); got != 0 {
		t.Fatalf("pending changes after restore: %v", got)
	}
	if got := testutil.ToFloat64(m.flushes); got != flushes+1 {
		t.Fatalf("store commits during restore: %v, want one", got-flushes)
	}
	if _, ok := dst.Current().Requests.Get("mine"); ok {
		t.Fatal("request id of the replaced state is still remembered")
	}
	// Drain: the dropped pending changes must not be written now.
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	defer re.Close()
	sameMetadata(t, want, re.Current())
}

func TestRestoreIsAtomic(t *testing.T) {
	dir := t.TempDir()
	sm, _, _ := richSM(t, Config{Dir: dir})
	good, err := sm.Capture(sm.Current().Index)()
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := richSM(t, Config{})
	ob := &applier{t: t, sm: other, index: other.Current().Index}
	ob.apply(Command{Text: "DROP KEYSPACE other"})
	otherData, err := other.Capture(ob.index)()
	other.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := sm.Current()

	flipped := bytes.Clone(otherData)
	flipped[len(flipped)/2] ^= 0x10
	badRecord := snapshot.Encode(nil, &snapshot.Contents{Index: 99, Requests: []snapshot.Request{{ID: "x", Record: []byte{recordVersion, 0xff}}}})
	tests := []struct {
		name  string
		index uint64
		data  []byte
		is    error
	}{
		{"flipped byte", ob.index, flipped, snapshot.ErrChecksum},
		{"truncated", ob.index, otherData[:len(otherData)-100], snapshot.ErrCorrupt},
		{"empty", ob.index, nil, snapshot.ErrCorrupt},
		{"not a snapshot", ob.index, []byte("CREATE TABLE x.y (id int PRIMARY KEY)"), snapshot.ErrCorrupt},
		{"wrong index", ob.index + 1, otherData, ErrSnapshotIndex},
		{"bad request record", 99, badRecord, ErrBadCommand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sm.Restore(tt.index, tt.data)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Restore: %v, want %v", err, tt.is)
			}
			if sm.Current() != before {
				t.Fatal("a failed restore published new metadata")
			}
		})
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	sameMetadata(t, before, re.Current())
	// The good snapshot still restores.
	if err := re.Restore(before.Index, good); err != nil {
		t.Fatal(err)
	}
	re.Close()
}

func TestCaptureIndex(t *testing.T) {
	sm, a, _ := richSM(t, Config{})
	defer sm.Close()
	if _, err := sm.Capture(a.index - 1)(); !errors.Is(err, ErrCaptureIndex) {
		t.Fatalf("capture behind the state: %v", err)
	}
	// Entries after the last command that were not commands (e.g. raft
	// configuration changes) leave the metadata as it is.
	data, err := sm.Capture(a.index + 5)()
	if err != nil {
		t.Fatal(err)
	}
	c := capturedContents(t, data)
	if c.Index != a.index+5 || c.Epoch != sm.Current().Epoch {
		t.Fatalf("snapshot %+v", c)
	}
	dst := openSM(t, t.TempDir())
	defer dst.Close()
	if err := dst.Restore(a.index+5, data); err != nil {
		t.Fatal(err)
	}
	if dst.Current().Index != a.index+5 {
		t.Fatalf("restored index %d, want %d", dst.Current().Index, a.index+5)
	}
}

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSizeGuard grows the schema past 75% and then 100% of a 64 KiB
// max_mutation_size, capturing after every few tables.
func TestSizeGuard(t *testing.T) {
	const max = 64 << 10
	var logs lockedBuffer
	reg := prometheus.NewPedanticRegistry()
	metrics := NewMetrics(reg)
	sm, err := Open(Config{Dir: t.TempDir(), MaxSnapshotBytes: max, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	m := &metrics.snapshot
	if got := testutil.ToFloat64(m.max); got != max {
		t.Fatalf("metalog_snapshot_max_bytes = %v, want %d", got, max)
	}
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})

	next := 0
	grow := func() {
		cmds := make([]Command, 25)
		for i := range cmds {
			cmds[i] = Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY, v text)", next)}
			next++
		}
		a.apply(cmds...)
	}
	var warnedAt, warnedTables, failedAt int
	for tooLarge := 0; tooLarge < 3; {
		grow()
		data, err := sm.Capture(a.index)()
		size := int(testutil.ToFloat64(m.size))
		warnings := testutil.ToFloat64(m.warnings)
		switch {
		case size*4 < 3*max:
			if err != nil || len(data) != size || warnings != 0 {
				t.Fatalf("%d bytes (below 75%%): err %v, %d bytes returned, %v warnings", size, err, len(data), warnings)
			}
		case size <= max:
			if warnedAt == 0 {
				warnedAt, warnedTables = size, next
			}
			if err != nil || len(data) != size || warnings != 1 {
				t.Fatalf("%d bytes (75-100%%): err %v, %v warnings, want 1", size, err, warnings)
			}
		default:
			if failedAt == 0 {
				failedAt = size
			}
			tooLarge++
			want := fmt.Sprintf("snapshot of %d bytes exceeds max_mutation_size %d", size, max)
			if !errors.Is(err, snapshot.ErrTooLarge) || !strings.Contains(err.Error(), want) || data != nil {
				t.Fatalf("%d bytes (over): err %v, want one naming %q", size, err, want)
			}
			if warnings != 1 {
				t.Fatalf("%d bytes (over): %v warnings, want still 1", size, warnings)
			}
		}
	}
	t.Logf("warned at %d bytes (%d tables), refused from %d bytes", warnedAt, warnedTables, failedAt)
	if warnedAt == 0 {
		t.Fatal("no capture landed between 75% and 100%")
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") ||
		!strings.Contains(lines[0], fmt.Sprintf("size=%d", warnedAt)) || !strings.Contains(lines[0], fmt.Sprintf("limit=%d", max)) {
		t.Fatalf("want one WARN naming size and limit, got:\n%s", logs.String())
	}

	// Dropping below 75% re-arms the warning; the next crossing warns again.
	a.apply(Command{Text: "DROP KEYSPACE shop; " + ksDDL})
	if _, err := sm.Capture(a.index)(); err != nil {
		t.Fatal(err)
	}
	for testutil.ToFloat64(m.size)*4 < 3*max {
		grow()
		if _, err := sm.Capture(a.index)(); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(m.warnings); got != 2 {
		t.Fatalf("warnings after the second crossing = %v, want 2", got)
	}
	if n, err := testutil.GatherAndCount(reg, "metalog_snapshot_size_bytes", "metalog_snapshot_max_bytes",
		"metalog_snapshot_size_warnings_total", "metalog_snapshot_duration_seconds"); err != nil || n != 4 {
		t.Fatalf("registered snapshot metrics: %d, %v", n, err)
	}
	if got := testutil.CollectAndCount(m.duration); got != 1 {
		t.Fatalf("duration histogram series: %d", got)
	}
}

func TestMaxSnapshotBytesConfig(t *testing.T) {
	if _, err := Open(Config{Dir: t.TempDir(), MaxSnapshotBytes: -1}); err == nil || !strings.Contains(err.Error(), "max snapshot bytes") {
		t.Fatalf("negative MaxSnapshotBytes: %v", err)
	}
	sm, m := openWith(t, Config{Dir: t.TempDir()})
	defer sm.Close()
	if got := testutil.ToFloat64(m.snapshot.max); got != DefaultMaxSnapshotBytes {
		t.Fatalf("default limit %v, want %d", got, DefaultMaxSnapshotBytes)
	}
}

// TestEncodeRunsWhileApplyContinues: Capture only takes the immutable
// view, so its encode function can run on another goroutine while Apply
// goes on, and encodes the state at the captured index.
func TestEncodeRunsWhileApplyContinues(t *testing.T) {
	sm, a := loadedSM(t, 2000)
	want := sm.Current()
	allocs := testing.AllocsPerRun(100, func() { sm.Capture(a.index) })
	if allocs > 2 {
		t.Errorf("Capture allocates %v times, want at most 2 (the closure)", allocs)
	}
	encode := sm.Capture(a.index)
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := encode()
		done <- result{data, err}
	}()
	for i := range 200 {
		if err := applyStep(sm, a, i); err != nil {
			t.Fatal(err)
		}
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := capturedContents(t, r.data)
	if c.Index != want.Index || c.Epoch != want.Epoch || c.Schema.Digest() != want.Schema.Digest() || c.Schema.TableCount() != 2000 {
		t.Fatalf("snapshot at %d/%d with %d tables; captured %d/%d with 2000", c.Index, c.Epoch, c.Schema.TableCount(), want.Index, want.Epoch)
	}
	if sm.Current().Schema.TableCount() != 2200 {
		t.Fatalf("apply did not go on: %d tables", sm.Current().Schema.TableCount())
	}
}

// BenchmarkCaptureEncode is the whole snapshot path at 100,000 minimal
// tables: Capture on the raft goroutine, then the encode function.
func BenchmarkCaptureEncode(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			sm, a := loadedSM(b, n)
			var size int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				data, err := sm.Capture(a.index)()
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(size), "snapshot_bytes")
			b.ReportMetric(float64(size)/float64(n), "bytes/table")
		})
	}
}

// BenchmarkRestore decodes a snapshot and rewrites the store from it.
func BenchmarkRestore(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			src, a := loadedSM(b, n)
			data, err := src.Capture(a.index)()
			if err != nil {
				b.Fatal(err)
			}
			dst, err := Open(Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer dst.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := dst.Restore(a.index, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
