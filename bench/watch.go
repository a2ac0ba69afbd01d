package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/buildinfo"
)

// WatchOptions configures the change-feed benchmark (Watch).
type WatchOptions struct {
	// Binary is the metalog executable to start. Required.
	Binary string
	// Dir is the parent of the members' data dirs, one directory per phase
	// (baseline, watchers, history), kept; default temp dirs, each removed
	// at the end of its phase.
	Dir string
	// Nodes is the number of voting members of the baseline and watchers
	// phases. Default 3.
	Nodes int
	// Observers is the number of observers (members that never vote,
	// named o1 to oN) added to the voters of the baseline and watchers
	// phases once they are up, so that both phases carry the same
	// replication. With observers the watchers are on them alone, and the
	// voters only take the DDL. Default 0: no observers, the watchers on
	// the voters.
	Observers int
	// Tables is the number of CREATE TABLE statements of the baseline and
	// watchers phases, sent one at a time by one client to the leader.
	// Default 10000.
	Tables int
	// Watchers is the number of watch streams of the watchers phase, from
	// now, spread round-robin over the members (watcher i on member
	// i % Nodes), or over the observers when there are any. Default 1000.
	Watchers int
	// StreamsPerConnection is how many of one member's watchers share a
	// client.Client, and so a connection. Default 1: each watcher its
	// own, as independent consumers would. A member refuses more streams
	// on one connection than max_concurrent_requests_per_connection (64 by
	// default; a stream counts as a request in flight).
	StreamsPerConnection int
	// HistoryEpochs, if positive (at least 1000), runs the history phase:
	// that many epochs on a one-member cluster, History and at-epoch reads
	// timed after the first 1000 and after the last. Default 0: skipped.
	HistoryEpochs int
	// MemberGOMAXPROCS, if positive, sets GOMAXPROCS for every member the
	// benchmark starts (see TablesOptions.MemberGOMAXPROCS).
	MemberGOMAXPROCS int
	// ServeArgs are extra arguments for every `metalog serve`.
	ServeArgs []string
	// Progress, if set, receives the phases and a progress line every
	// second while tables or epochs are made.
	Progress io.Writer
}

// historyStartEpochs is how many epochs the history phase makes before
// its first reads.
const historyStartEpochs = 1000

func (o *WatchOptions) validate() error {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Tables == 0 {
		o.Tables = 10000
	}
	if o.Watchers == 0 {
		o.Watchers = 1000
	}
	if o.StreamsPerConnection == 0 {
		o.StreamsPerConnection = 1
	}
	switch {
	case o.Binary == "":
		return errors.New("bench: watch: a binary to start is required")
	case o.Nodes < 1:
		return fmt.Errorf("bench: --nodes %d: want at least 1", o.Nodes)
	case o.Observers < 0:
		return fmt.Errorf("bench: --observers %d: want 0 (watchers on the voters) or more", o.Observers)
	case o.Tables < 1:
		return fmt.Errorf("bench: --tables %d: want at least 1", o.Tables)
	case o.Watchers < 1:
		return fmt.Errorf("bench: --watchers %d: want at least 1", o.Watchers)
	case o.StreamsPerConnection < 1:
		return fmt.Errorf("bench: --streams-per-connection %d: want at least 1", o.StreamsPerConnection)
	case o.HistoryEpochs != 0 && o.HistoryEpochs < historyStartEpochs:
		return fmt.Errorf("bench: --history-epochs %d: want 0 (no history phase) or at least %d", o.HistoryEpochs, historyStartEpochs)
	case o.MemberGOMAXPROCS < 0:
		return fmt.Errorf("bench: --member-gomaxprocs %d: want 0 (the runtime's default) or more", o.MemberGOMAXPROCS)
	}
	return nil
}

// say writes one line about the run's progress to o.Progress, if set.
func (o *WatchOptions) say(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// ErrWatchMismatch is returned, with the result, when a watcher did not
// receive every table's event exactly once: the result's Delivery says
// which.
var ErrWatchMismatch = errors.New("bench: watch: a watcher did not receive every event exactly once")

// WatchResult holds the figures of the change-feed benchmark. Times are
// in milliseconds, sizes in bytes.
type WatchResult struct {
	Benchmark string `json:"benchmark"`
	// Version is the module version of the metalog binary that ran the
	// benchmark (and started its members).
	Version string `json:"version"`
	Nodes   int    `json:"nodes"`
	// Observers is how many observers the phases had besides the Nodes
	// voters (WatchOptions.Observers). The figures by member list the
	// voters first, n1 to nNodes, then the observers, o1 to oObservers.
	Observers int `json:"observers"`
	Tables    int `json:"tables"`
	Watchers  int `json:"watchers"`
	// Target is where the one DDL client sends: "leader", in both phases.
	Target string `json:"target"`
	// Leader is the watchers phase's leader when the watchers opened
	// (the others' watchers are the followers' of Delivery), and
	// LeaderAtEnd the leader once every event was delivered.
	Leader      string `json:"leader"`
	LeaderAtEnd string `json:"leader_at_end"`
	// StreamsPerConnection is how many watchers of one member share a
	// connection (WatchOptions), and Connections how many connections the
	// watchers had.
	StreamsPerConnection int `json:"streams_per_connection"`
	Connections          int `json:"connections"`
	MemberGOMAXPROCS     int `json:"member_gomaxprocs,omitempty"`

	// Baseline and WithWatchers are the CREATE TABLE latencies without
	// and with the watchers; the ratios are WithWatchers over Baseline.
	Baseline     DDLFigures `json:"baseline"`
	WithWatchers DDLFigures `json:"with_watchers"`
	MeanRatio    float64    `json:"ddl_mean_ratio"`
	P99Ratio     float64    `json:"ddl_p99_ratio"`

	// WatcherMemberCPUSeconds is the members' CPU time of the watchers
	// phase's tables less the baseline's: what the watchers cost them.
	// MemberCPUPerEventUs is that over the events the members sent
	// (metalog_watch_events_sent_total, summed), in microseconds, and
	// MemberCPUPerWatcherMs over the watchers, in milliseconds.
	WatcherMemberCPUSeconds float64 `json:"watcher_member_cpu_seconds"`
	MemberCPUPerEventUs     float64 `json:"member_cpu_per_event_us"`
	MemberCPUPerWatcherMs   float64 `json:"member_cpu_per_watcher_ms"`
	// VoterCPUSeconds and ObserverCPUSeconds split
	// WatcherMemberCPUSeconds between the voters and the observers, and
	// VoterCPUPerEventUs and ObserverCPUPerEventUs are each over the
	// events its members sent (0 when they sent none).
	VoterCPUSeconds       float64 `json:"voter_cpu_seconds"`
	ObserverCPUSeconds    float64 `json:"observer_cpu_seconds"`
	VoterCPUPerEventUs    float64 `json:"voter_cpu_per_event_us"`
	ObserverCPUPerEventUs float64 `json:"observer_cpu_per_event_us"`

	Idle     IdleFigures     `json:"idle"`
	Delivery DeliveryFigures `json:"delivery"`

	// PeakRSSPerNodeBytes is each member's VmHWM at the end of the
	// watchers phase; PeakRSSBytes their sum.
	PeakRSSPerNodeBytes []int64 `json:"peak_rss_per_node_bytes"`
	PeakRSSBytes        int64   `json:"peak_rss_bytes"`
	// VoterPeakRSSBytes and ObserverPeakRSSBytes split PeakRSSBytes
	// between the voters and the observers.
	VoterPeakRSSBytes    int64 `json:"voter_peak_rss_bytes"`
	ObserverPeakRSSBytes int64 `json:"observer_peak_rss_bytes"`
	// DiskBytes is the watchers phase's data dirs on disk, once stopped.
	DiskBytes int64 `json:"disk_bytes"`
	// HistoryRecords is how many records of the tables' epochs the
	// leader's schema.db history bucket holds, and HistoryRecordBytes their
	// mean encoded size (the record of one minimal CREATE TABLE).
	HistoryRecords     int     `json:"history_records"`
	HistoryRecordBytes float64 `json:"history_record_bytes"`

	// History is the history phase's, when it ran.
	History *HistoryFigures `json:"history,omitempty"`
}

// DDLFigures are the latencies of one phase's CREATE TABLEs, and the CPU
// time used while they ran.
type DDLFigures struct {
	WallSeconds  float64 `json:"wall_seconds"`
	OpsPerSecond float64 `json:"ops_per_second"`
	MeanMs       float64 `json:"mean_ms"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
	// MemberCPUSeconds is each member's CPU time (user and system),
	// voters then observers, and
	// BenchCPUSeconds the benchmark process's, the DDL client and the
	// watchers included: with both on one machine, which side the cores
	// went to.
	MemberCPUSeconds []float64 `json:"member_cpu_seconds"`
	BenchCPUSeconds  float64   `json:"bench_cpu_seconds"`
}

// ddlFigures summarizes one phase's latencies (see summarize).
func ddlFigures(latencies []time.Duration, wall time.Duration) DDLFigures {
	r := summarize(latencies, wall, 1)
	return DDLFigures{WallSeconds: r.WallSeconds, OpsPerSecond: r.OpsPerSecond, MeanMs: r.BucketMeanMs[0], P50Ms: r.P50Ms, P99Ms: r.P99Ms}
}

// Watch runs the change-feed benchmark: a baseline of Tables CREATE
// TABLEs on a fresh cluster; the same on another fresh cluster with
// Watchers idle watch streams open (their memory, then how soon followers'
// watchers receive each change, and that every watcher receives every
// one); the history's size per record; and, with HistoryEpochs, the cost
// of History and at-epoch reads over a long history. A run whose watchers
// missed or repeated events returns the result and an error matching
// ErrWatchMismatch.
func Watch(ctx context.Context, o WatchOptions) (*WatchResult, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &WatchResult{Benchmark: "watch", Version: buildinfo.Read().Version, Nodes: o.Nodes, Observers: o.Observers, Tables: o.Tables, Watchers: o.Watchers,
		Target: TargetLeader, StreamsPerConnection: o.StreamsPerConnection, MemberGOMAXPROCS: o.MemberGOMAXPROCS}
	var err error
	o.say("baseline: %d tables on %d members and %d observers, no watchers", o.Tables, o.Nodes, o.Observers)
	if r.Baseline, err = o.baseline(ctx); err != nil {
		return nil, err
	}
	o.say("watchers: %d tables on %d members and %d observers, %d watchers", o.Tables, o.Nodes, o.Observers, o.Watchers)
	if err := o.watchersPhase(ctx, r); err != nil {
		return nil, err
	}
	r.MeanRatio = r.WithWatchers.MeanMs / r.Baseline.MeanMs
	r.watcherCPU()
	r.P99Ratio = r.WithWatchers.P99Ms / r.Baseline.P99Ms
	if o.HistoryEpochs > 0 {
		o.say("history: %d epochs on 1 member", o.HistoryEpochs)
		if r.History, err = o.historyPhase(ctx); err != nil {
			return nil, err
		}
	}
	if r.Delivery.Mismatched > 0 {
		return r, fmt.Errorf("%w: %d of %d watchers (%s)", ErrWatchMismatch, r.Delivery.Mismatched, r.Watchers, r.Delivery.Mismatches[0])
	}
	return r, nil
}

// watcherCPU sets the members' CPU figures of the watchers (see
// WatchResult.WatcherMemberCPUSeconds), all and split between the voters
// (the first Nodes members) and the observers.
func (r *WatchResult) watcherCPU() {
	with, base, sent := r.WithWatchers.MemberCPUSeconds, r.Baseline.MemberCPUSeconds, r.Delivery.EventsSentPerNode
	r.VoterCPUSeconds = sum(firstOf(with, r.Nodes)) - sum(firstOf(base, r.Nodes))
	r.ObserverCPUSeconds = sum(restOf(with, r.Nodes)) - sum(restOf(base, r.Nodes))
	r.WatcherMemberCPUSeconds = r.VoterCPUSeconds + r.ObserverCPUSeconds
	voterEvents, observerEvents := sum(firstOf(sent, r.Nodes)), sum(restOf(sent, r.Nodes))
	r.MemberCPUPerEventUs = perEventUs(r.WatcherMemberCPUSeconds, voterEvents+observerEvents)
	r.VoterCPUPerEventUs = perEventUs(r.VoterCPUSeconds, voterEvents)
	r.ObserverCPUPerEventUs = perEventUs(r.ObserverCPUSeconds, observerEvents)
	r.MemberCPUPerWatcherMs = r.WatcherMemberCPUSeconds * 1e3 / float64(r.Watchers)
}

// perEventUs is seconds over events, in microseconds; 0 for no events.
func perEventUs(seconds float64, events int64) float64 {
	if events <= 0 {
		return 0
	}
	return seconds * 1e6 / float64(events)
}

// sum adds up v.
func sum[T int64 | float64](v []T) T {
	var s T
	for _, x := range v {
		s += x
	}
	return s
}

// firstOf is the voters' part of v, a figure by member (its first n),
// and restOf the observers'.
func firstOf[T any](v []T, n int) []T { return v[:min(n, len(v))] }

// restOf: see firstOf.
func restOf[T any](v []T, n int) []T { return v[min(n, len(v)):] }

// phase is the cluster of one phase, voters then observers, and the one
// client, on its leader, that changes the schema.
type phase struct {
	opts   *TablesOptions
	c      *cluster
	leader *node
	cl     *client.Client
	close  func()
}

// limitArgs lift the members' limits on streams and connections to what
// the watchers need: every watcher is the same identity (auth is off),
// all from 127.0.0.1, each on a connection of its own by default. Flags
// in ServeArgs come after them, and win.
func (o *WatchOptions) limitArgs() []string {
	streams := strconv.Itoa(max(o.Watchers, 1))
	conns := strconv.Itoa(o.Watchers + 64)
	return []string{"--max-watch-streams", streams, "--max-watch-streams-per-identity", streams,
		"--max-connections", conns, "--max-connections-per-source", conns}
}

// startPhase starts a fresh cluster of n members for the phase named
// name, in its own directory, and prepares it as Tables does: keyspace
// ks, tables_warn_threshold raised, and the client on the leader warmed;
// then adds o.Observers observers (see addObservers).
func (o *WatchOptions) startPhase(ctx context.Context, name string, n int) (*phase, error) {
	to := &TablesOptions{Binary: o.Binary, Nodes: n, Tables: o.Tables, Clients: 1, Buckets: 1, Target: TargetLeader,
		MemberGOMAXPROCS: o.MemberGOMAXPROCS, ServeArgs: append(o.limitArgs(), o.ServeArgs...), Progress: o.Progress}
	if o.Dir != "" {
		to.Dir = filepath.Join(o.Dir, name)
	}
	if err := to.validate(); err != nil {
		return nil, err
	}
	c, stop, err := to.startCluster(ctx)
	if err != nil {
		return nil, err
	}
	leader, err := c.leader(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	clients, closeClients, err := to.prepare(ctx, []string{leader.grpcAddr})
	if err != nil {
		stop()
		return nil, err
	}
	p := &phase{opts: to, c: c, leader: leader, cl: clients[0], close: func() { closeClients(); stop() }}
	if err := p.addObservers(ctx, o.Observers); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// addObservers adds n observers, o1 to on, through the leader, started
// as the voters were (their serve arguments and environment), and waits
// until each has applied what the leader had.
func (p *phase) addObservers(ctx context.Context, n int) error {
	for i := range n {
		nd, err := p.c.addMember(ctx, p.cl, fmt.Sprintf("o%d", i+1), true, p.leader.grpcAddr, p.opts.ServeArgs)
		if err != nil {
			return err
		}
		if _, err := nd.waitApplied(ctx, p.leader); err != nil {
			return err
		}
	}
	return nil
}

// feedNodes are the members the watchers go to: the observers when there
// are any, else every member.
func (p *phase) feedNodes() []*node {
	var observers []*node
	for _, nd := range p.c.nodes {
		if nd.observer {
			observers = append(observers, nd)
		}
	}
	if len(observers) > 0 {
		return observers
	}
	return p.c.nodes
}

// createTables runs the phase's timed CREATE TABLEs (TablesOptions's).
func (p *phase) createTables(ctx context.Context, ack func(i int, resp *pb.ExecuteResponse, at time.Time)) (DDLFigures, error) {
	before, err := p.c.cpu()
	if err != nil {
		return DDLFigures{}, err
	}
	latencies, wall, err := p.opts.createTables(ctx, []ddlSender{grpcSender{p.cl}}, ack)
	if err != nil {
		return DDLFigures{}, err
	}
	after, err := p.c.cpu()
	if err != nil {
		return DDLFigures{}, err
	}
	f := ddlFigures(latencies, wall)
	for i := range p.c.nodes {
		f.MemberCPUSeconds = append(f.MemberCPUSeconds, after[i]-before[i])
	}
	f.BenchCPUSeconds = after[len(after)-1] - before[len(before)-1]
	return f, nil
}

// cpu returns the CPU seconds used by each member and, last, by this
// process.
func (c *cluster) cpu() ([]float64, error) {
	var out []float64
	for _, pid := range append(c.pids(), os.Getpid()) {
		s, err := cpuSeconds(pid)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// pids returns the members' process ids.
func (c *cluster) pids() []int {
	var out []int
	for _, nd := range c.nodes {
		out = append(out, nd.cmd.Process.Pid)
	}
	return out
}

// baseline is phase 1: the tables without watchers.
func (o *WatchOptions) baseline(ctx context.Context) (DDLFigures, error) {
	p, err := o.startPhase(ctx, "baseline", o.Nodes)
	if err != nil {
		return DDLFigures{}, err
	}
	defer p.close()
	return p.createTables(ctx, nil)
}

// watchersPhase is phases 2 and 3: the watchers opened on a fresh cluster
// (their memory), the tables created while they follow (latencies and
// delivery), then the members' peak RSS and disk, and the size of the
// history records.
func (o *WatchOptions) watchersPhase(ctx context.Context, r *WatchResult) error {
	p, err := o.startPhase(ctx, "watchers", o.Nodes)
	if err != nil {
		return err
	}
	defer p.close()
	// Every member at the leader's index: every feed starts at one epoch.
	for _, nd := range p.c.nodes {
		if _, err := nd.waitApplied(ctx, p.leader); err != nil {
			return err
		}
	}
	f, err := p.openFeeds(ctx, o, &r.Idle)
	if err != nil {
		return err
	}
	defer f.close()
	r.Connections = len(f.clients)
	o.say("watchers: %d open in %.1f s, %.0f bytes of member RSS each", o.Watchers, r.Idle.OpenSeconds, r.Idle.RSSBytesPerWatcher)
	if r.WithWatchers, err = p.createTables(ctx, f.ack); err != nil {
		return err
	}
	if err := f.wait(ctx); err != nil {
		return err
	}
	if r.Delivery, err = f.delivery(ctx, p.c); err != nil {
		return err
	}
	// The watchers counted as on followers were so throughout, unless
	// this says otherwise.
	end, err := p.c.leader(ctx)
	if err != nil {
		return err
	}
	r.Leader, r.LeaderAtEnd = p.leader.name, end.name
	var m Result
	if err := m.measureCluster(p.c); err != nil {
		return err
	}
	r.PeakRSSPerNodeBytes, r.PeakRSSBytes, r.DiskBytes = m.PeakRSSPerNodeBytes, m.PeakRSSBytes, m.DiskBytes
	r.VoterPeakRSSBytes, r.ObserverPeakRSSBytes = sum(firstOf(r.PeakRSSPerNodeBytes, o.Nodes)), sum(restOf(r.PeakRSSPerNodeBytes, o.Nodes))
	r.HistoryRecords, r.HistoryRecordBytes, err = historyRecordSize(p.leader.dir, f.base, f.base+uint64(o.Tables))
	return err
}
