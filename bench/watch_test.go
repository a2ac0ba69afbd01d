package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	Tables               int     `json:"tables"`
	Watchers             int     `json:"watchers"`
	Target               string  `json:"target"`
	Leader               string  `json:"leader"`
	LeaderAtEnd          string  `json:"leader_at_end"`
	StreamsPerConnection int     `json:"streams_per_connection"`
	Connections          int     `json:"connections"`
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
	PeakRSSBytes       int64   `json:"peak_rss_bytes"`
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Watch(ctx, WatchOptions{Binary: metalogBinary, Nodes: nodes, Tables: tables, Watchers: watchers, StreamsPerConnection: perConn, HistoryEpochs: 2000, Dir: t.TempDir()})
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
	if r.Benchmark != "watch" || r.Nodes != nodes || r.Tables != tables || r.Watchers != watchers || r.Target != TargetLeader || r.StreamsPerConnection != perConn || r.Leader == "" || r.LeaderAtEnd == "" {
		t.Errorf("run described as %s", b)
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
	checkIdle(t, &r)
	checkDelivery(t, &r)
	if r.PeakRSSBytes <= 0 || r.DiskBytes <= 0 || r.HistoryRecords != tables || r.HistoryRecordBytes <= 0 {
		t.Errorf("peak RSS %d, disk %d, %d history records of %.0f bytes: want all measured, %d records", r.PeakRSSBytes, r.DiskBytes, r.HistoryRecords, r.HistoryRecordBytes, tables)
	}
	checkHistory(t, &r)
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
