package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"

	"go.uber.org/goleak"
)

// metalogBinary is the metalog executable TestMain builds for the tests
// that start members.
var metalogBinary string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "metalog-bench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	metalogBinary = filepath.Join(dir, "metalog")
	build := exec.Command("go", "build", "-o", metalogBinary, "../cmd/metalog")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building metalog:", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// watchJSON is the part of WatchResult's JSON the test checks, by its
// field names.
type watchJSON struct {
	Benchmark            string  `json:"benchmark"`
	Nodes                int     `json:"nodes"`
	Observers            *int    `json:"observers"`
	Tables               int     `json:"tables"`
	Watchers             int     `json:"watchers"`
	Target               string  `json:"target"`
	Leader               string  `json:"leader"`
	LeaderAtEnd          string  `json:"leader_at_end"`
	StreamsPerConnection int     `json:"streams_per_connection"`
	Connections          int     `json:"connections"`
	WatcherCPU           float64 `json:"watcher_member_cpu_seconds"`
	VoterCPU             float64 `json:"voter_cpu_seconds"`
	ObserverCPU          float64 `json:"observer_cpu_seconds"`
	VoterCPUPerEvent     float64 `json:"voter_cpu_per_event_us"`
	ObserverCPUPerEvent  float64 `json:"observer_cpu_per_event_us"`
	Baseline             ddlJSON `json:"baseline"`
	WithWatchers         ddlJSON `json:"with_watchers"`
	Idle                 struct {
		WatchersPerNode      []int64 `json:"watchers_per_node"`
		RSSBefore            []int64 `json:"rss_before_per_node_bytes"`
		RSSAfter             []int64 `json:"rss_after_per_node_bytes"`
		GoroutinesPerWatcher float64 `json:"goroutines_per_watcher"`
	} `json:"idle"`
	Delivery struct {
		FollowerWatchers int     `json:"follower_watchers"`
		Pairs            int     `json:"pairs"`
		MinMs            float64 `json:"min_ms"`
		P50Ms            float64 `json:"p50_ms"`
		P99Ms            float64 `json:"p99_ms"`
		MaxMs            float64 `json:"max_ms"`
		EventsMin        int     `json:"events_per_watcher_min"`
		EventsMax        int     `json:"events_per_watcher_max"`
		Mismatched       int     `json:"mismatched_watchers"`
		EventsSent       []int64 `json:"events_sent_per_node"`
	} `json:"delivery"`
	PeakRSSPerNode     []int64 `json:"peak_rss_per_node_bytes"`
	PeakRSSBytes       int64   `json:"peak_rss_bytes"`
	VoterPeakRSS       int64   `json:"voter_peak_rss_bytes"`
	ObserverPeakRSS    int64   `json:"observer_peak_rss_bytes"`
	DiskBytes          int64   `json:"disk_bytes"`
	HistoryRecords     int     `json:"history_records"`
	HistoryRecordBytes float64 `json:"history_record_bytes"`
	History            *struct {
		Epochs int       `json:"epochs"`
		Start  readsJSON `json:"start"`
		End    readsJSON `json:"end"`
	} `json:"history"`
}

type ddlJSON struct {
	MeanMs    float64   `json:"mean_ms"`
	P50Ms     float64   `json:"p50_ms"`
	P99Ms     float64   `json:"p99_ms"`
	MemberCPU []float64 `json:"member_cpu_seconds"`
}

type readsJSON struct {
	Epoch          uint64   `json:"epoch"`
	NewestMs       float64  `json:"history_newest_100_median_ms"`
	AtMinus100Ms   float64  `json:"get_schema_at_minus_100_median_ms"`
	AtMinus10000Ms *float64 `json:"get_schema_at_minus_10000_median_ms"`
}

// TestWatchSmall runs the watch benchmark at a small size on real
// members and checks that its JSON reports the work done: every watcher
// got every event, counts agree with the members' metrics, and every
// timing was taken. The figures themselves are not judged. It starts 7
// members, one phase after another, in about 4 s: -short runs it too.
func TestWatchSmall(t *testing.T) {
	const nodes, tables, watchers, perConn = 3, 50, 20, 2
	res, r := runWatch(t, WatchOptions{Binary: metalogBinary, Nodes: nodes, Tables: tables, Watchers: watchers, StreamsPerConnection: perConn, HistoryEpochs: 2000, Dir: t.TempDir()})
	if r.Benchmark != "watch" || r.Nodes != nodes || r.Observers == nil || *r.Observers != 0 || r.Tables != tables || r.Watchers != watchers || r.Target != TargetLeader || r.StreamsPerConnection != perConn || r.Leader == "" || r.LeaderAtEnd == "" {
		t.Errorf("run described as %+v", res)
	}
	// 7, 7 and 6 watchers on the members, 2 to a connection.
	if r.Connections != 4+4+3 {
		t.Errorf("%d connections, want 11 for 7, 7 and 6 watchers 2 to a connection", r.Connections)
	}
	for _, f := range []ddlJSON{r.Baseline, r.WithWatchers} {
		if f.MeanMs <= 0 || f.P50Ms <= 0 || f.P99Ms < f.P50Ms || len(f.MemberCPU) != nodes {
			t.Errorf("DDL figures %+v: want positive latencies, p50 <= p99, the CPU time of each member", f)
		}
	}
	checkIdle(t, r)
	checkDelivery(t, r)
	if r.PeakRSSBytes <= 0 || r.DiskBytes <= 0 || r.HistoryRecords != tables || r.HistoryRecordBytes <= 0 {
		t.Errorf("peak RSS %d, disk %d, %d history records of %.0f bytes: want all measured, %d records", r.PeakRSSBytes, r.DiskBytes, r.HistoryRecords, r.HistoryRecordBytes, tables)
	}
	checkHistory(t, r)
}

func checkIdle(t *testing.T, r *watchJSON) {
	t.Helper()
	var open int64
	for _, n := range r.Idle.WatchersPerNode {
		open += n
	}
	if len(r.Idle.WatchersPerNode) != r.Nodes || open != int64(r.Watchers) || len(r.Idle.RSSBefore) != r.Nodes || len(r.Idle.RSSAfter) != r.Nodes {
		t.Errorf("idle figures %+v: want one per member, %d watchers in all", r.Idle, r.Watchers)
	}
	// Each watch is a goroutine on its member at least.
	if r.Idle.GoroutinesPerWatcher < 1 {
		t.Errorf("%.2f goroutines per watcher, want at least 1", r.Idle.GoroutinesPerWatcher)
	}
}

func checkDelivery(t *testing.T, r *watchJSON) {
	t.Helper()
	d := r.Delivery
	// The leader holds 6 or 7 of the 20 watchers.
	if d.FollowerWatchers != 13 && d.FollowerWatchers != 14 || d.Pairs != d.FollowerWatchers*r.Tables {
		t.Errorf("%d follower watchers, %d pairs: want 13 or 14, and %d pairs each", d.FollowerWatchers, d.Pairs, r.Tables)
	}
	if d.Mismatched != 0 || d.EventsMin != r.Tables || d.EventsMax != r.Tables {
		t.Errorf("%d watchers mismatched, %d to %d events each: want none, %d each", d.Mismatched, d.EventsMin, d.EventsMax, r.Tables)
	}
	if !(d.MinMs <= d.P50Ms && d.P50Ms <= d.P99Ms && d.P99Ms <= d.MaxMs && d.MaxMs > 0) {
		t.Errorf("delivery lags min %.3f p50 %.3f p99 %.3f max %.3f ms: want ordered, max > 0", d.MinMs, d.P50Ms, d.P99Ms, d.MaxMs)
	}
	var sent int64
	for _, n := range d.EventsSent {
		sent += n
	}
	if sent != int64(r.Watchers*r.Tables) {
		t.Errorf("the members sent %v events, %d in all; want %d", d.EventsSent, sent, r.Watchers*r.Tables)
	}
}

func checkHistory(t *testing.T, r *watchJSON) {
	t.Helper()
	h := r.History
	if h == nil {
		t.Fatal("no history figures")
	}
	if h.Epochs != 2000 || h.End.Epoch-h.Start.Epoch != 1000 {
		t.Errorf("history phase of %d epochs, reads at epochs %d and %d: want 2000, 1000 apart", h.Epochs, h.Start.Epoch, h.End.Epoch)
	}
	for _, reads := range []readsJSON{h.Start, h.End} {
		if reads.NewestMs <= 0 || reads.AtMinus100Ms <= 0 || reads.AtMinus10000Ms != nil {
			t.Errorf("reads %+v: want History and GetSchema at -100 timed, no epoch 10000 back", reads)
		}
	}
}

// runWatch runs the watch benchmark with o and returns its result and its
// JSON read back.
func runWatch(t *testing.T, o WatchOptions) (*WatchResult, *watchJSON) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Watch(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var r watchJSON
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return res, &r
}

// TestWatchObservers runs the watch benchmark with 2 observers beside 3
// voters and checks that the watchers were on the observers alone, that
// every one got every event once and in order, and that the figures by
// member cover the observers, split from the voters'. Whether the
// observers' CPU with watchers less without is positive depends on the
// machine's noise at this size, and so does whether an observer used a
// clock tick (10 ms) of CPU in a phase: applying 30 DDLs takes less.
func TestWatchObservers(t *testing.T) {
	const nodes, observers, tables, watchers = 3, 2, 30, 6
	res, r := runWatch(t, WatchOptions{Binary: metalogBinary, Nodes: nodes, Observers: observers, Tables: tables, Watchers: watchers, Dir: t.TempDir()})
	if r.Observers == nil || *r.Observers != observers || r.Nodes != nodes || r.Watchers != watchers || r.Connections != watchers {
		t.Errorf("run described as %+v: want %d voters, %d observers, %d watchers each on its connection", r, nodes, observers, watchers)
	}
	members := nodes + observers
	if want := []int64{0, 0, 0, 3, 3}; !slices.Equal(r.Idle.WatchersPerNode, want) {
		t.Errorf("metalog_watchers by member %v, want %v: the watchers on the observers alone", r.Idle.WatchersPerNode, want)
	}
	d := r.Delivery
	if d.Mismatched != 0 || d.EventsMin != tables || d.EventsMax != tables || d.FollowerWatchers != watchers || d.Pairs != watchers*tables {
		t.Errorf("delivery %+v: want %d events for each of the %d watchers, all off the leader", d, tables, watchers)
	}
	if want := []int64{0, 0, 0, 3 * tables, 3 * tables}; !slices.Equal(d.EventsSent, want) {
		t.Errorf("events sent by member %v, want %v", d.EventsSent, want)
	}
	for _, f := range []ddlJSON{r.Baseline, r.WithWatchers} {
		if len(f.MemberCPU) != members || slices.Min(f.MemberCPU) < 0 {
			t.Errorf("member CPU %v: want one figure by member, none negative", f.MemberCPU)
		}
	}
	checkObserverCPU(t, res)
	if len(r.PeakRSSPerNode) != members || r.VoterPeakRSS+r.ObserverPeakRSS != r.PeakRSSBytes || r.ObserverPeakRSS != r.PeakRSSPerNode[3]+r.PeakRSSPerNode[4] || r.ObserverPeakRSS <= 0 {
		t.Errorf("peak RSS %v, voters %d, observers %d, in all %d: want the observers' the last two", r.PeakRSSPerNode, r.VoterPeakRSS, r.ObserverPeakRSS, r.PeakRSSBytes)
	}
}

// checkObserverCPU checks a run's CPU split against its figures by
// member.
func checkObserverCPU(t *testing.T, r *WatchResult) {
	t.Helper()
	with, base := r.WithWatchers.MemberCPUSeconds, r.Baseline.MemberCPUSeconds
	obs := with[3] + with[4] - base[3] - base[4]
	if !near(r.ObserverCPUSeconds, obs) || !near(r.VoterCPUSeconds+r.ObserverCPUSeconds, r.WatcherMemberCPUSeconds) {
		t.Errorf("CPU voters %.3f, observers %.3f, all %.3f s; the observers' by member %.3f s", r.VoterCPUSeconds, r.ObserverCPUSeconds, r.WatcherMemberCPUSeconds, obs)
	}
	events := r.Delivery.EventsSentPerNode[3] + r.Delivery.EventsSentPerNode[4]
	if !near(r.ObserverCPUPerEventUs, obs*1e6/float64(events)) || r.VoterCPUPerEventUs != 0 {
		t.Errorf("CPU per event voters %.3f, observers %.3f µs: want 0 (no events) and the observers' over %d events", r.VoterCPUPerEventUs, r.ObserverCPUPerEventUs, events)
	}
}

// near reports whether a and b agree but for rounding.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestWatchCPUSplit(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		nodes                      int
		base, with                 []float64
		sent                       []int64
		voter, observer, all       float64 // seconds
		voterUs, observerUs, allUs float64
	}{
		{name: "no observers", nodes: 3, base: []float64{1, 1, 1}, with: []float64{2, 3, 4}, sent: []int64{1e6, 1e6, 2e6},
			voter: 6, all: 6, voterUs: 1.5, allUs: 1.5},
		{name: "two observers", nodes: 3, base: []float64{1, 1, 1, 0.5, 0.5}, with: []float64{1.5, 1, 1, 2.5, 4.5}, sent: []int64{0, 0, 0, 1e6, 2e6},
			voter: 0.5, observer: 6, all: 6.5, observerUs: 2, allUs: 6.5 / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &WatchResult{Nodes: tc.nodes, Watchers: 10, Baseline: DDLFigures{MemberCPUSeconds: tc.base},
				WithWatchers: DDLFigures{MemberCPUSeconds: tc.with}, Delivery: DeliveryFigures{EventsSentPerNode: tc.sent}}
			r.watcherCPU()
			got := []float64{r.VoterCPUSeconds, r.ObserverCPUSeconds, r.WatcherMemberCPUSeconds, r.VoterCPUPerEventUs, r.ObserverCPUPerEventUs, r.MemberCPUPerEventUs, r.MemberCPUPerWatcherMs}
			want := []float64{tc.voter, tc.observer, tc.all, tc.voterUs, tc.observerUs, tc.allUs, tc.all * 100}
			for i := range want {
				if !near(got[i], want[i]) {
					t.Errorf("voters, observers, all s; µs per event of each; ms per watcher = %v, want %v", got, want)
					break
				}
			}
		})
	}
}

// TestWatcherProblem checks that a feed that missed, repeated or
// reordered an event is told from one that received every event once in
// order: what makes Watch fail with ErrWatchMismatch.
func TestWatcherProblem(t *testing.T) {
	const from, tables = 10, 3
	events := func(epochs ...uint64) *pb.WatchResponse {
		m := &pb.WatchResponse{Type: string(client.WatchEvents)}
		for _, e := range epochs {
			m.Events = append(m.Events, &pb.Event{Epoch: e})
			m.Epoch = e
		}
		return m
	}
	for _, tc := range []struct {
		name string
		msgs []*pb.WatchResponse
		ok   bool
	}{
		{"in order", []*pb.WatchResponse{events(11), events(12, 13)}, true},
		{"missed", []*pb.WatchResponse{events(11), events(13)}, false},
		{"repeated", []*pb.WatchResponse{events(11, 12), events(12), events(13)}, false},
		{"reordered", []*pb.WatchResponse{events(12), events(11), events(13)}, false},
		{"short", []*pb.WatchResponse{events(11, 12)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &watcher{from: from, last: from}
			for _, m := range tc.msgs {
				w.note(m, 1, tables)
			}
			if why := w.problem(tables); (why == "") != tc.ok {
				t.Errorf("problem %q, want none: %v", why, tc.ok)
			}
		})
	}
}

func TestWatchOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    WatchOptions
		want string // in the error; "" for none
	}{
		{"defaults", WatchOptions{Binary: "metalog"}, ""},
		{"observers", WatchOptions{Binary: "metalog", Observers: 2}, ""},
		{"negative observers", WatchOptions{Binary: "metalog", Observers: -1}, "--observers -1"},
		{"negative nodes", WatchOptions{Binary: "metalog", Nodes: -1}, "--nodes -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("validate() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
