package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// IdleFigures are what the watchers cost the members before any change:
// the member processes' figures after all of them had their first
// progress message, less those before the first was opened, over the
// watchers.
type IdleFigures struct {
	// OpenSeconds is the time from opening the first watch to every watch
	// having its first progress message.
	OpenSeconds float64 `json:"open_seconds"`
	// WatchersPerNode is each member's metalog_watchers once open.
	WatchersPerNode       []int64 `json:"watchers_per_node"`
	RSSBeforePerNodeBytes []int64 `json:"rss_before_per_node_bytes"`
	RSSAfterPerNodeBytes  []int64 `json:"rss_after_per_node_bytes"`
	// RSSBytesPerWatcher is the members' VmRSS growth over the watchers:
	// a stream and its share of a connection (WatchResult.Connections).
	RSSBytesPerWatcher float64 `json:"rss_bytes_per_watcher"`
	// HeapBytesPerWatcher and GoroutinesPerWatcher are the growth of the
	// members' go_memstats_heap_inuse_bytes and go_goroutines.
	HeapBytesPerWatcher  float64 `json:"heap_bytes_per_watcher"`
	GoroutinesPerWatcher float64 `json:"goroutines_per_watcher"`
}

// DeliveryFigures say how the watchers received the tables' events.
type DeliveryFigures struct {
	// FollowerWatchers is how many watchers were on followers or
	// observers (any member but the leader), and Pairs the (epoch,
	// follower watcher) pairs timed: FollowerWatchers × Tables when none
	// missed an event.
	FollowerWatchers int `json:"follower_watchers"`
	Pairs            int `json:"pairs"`
	// The receive time at a follower's watcher less the DDL client's
	// acknowledgement time of the same epoch, both on this process's
	// monotonic clock: negative when the follower's event came first.
	MinMs float64 `json:"min_ms"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// EventsPerWatcherMin and EventsPerWatcherMax bound the events of the
	// tables' epochs each watcher received (Tables when all is well).
	EventsPerWatcherMin int `json:"events_per_watcher_min"`
	EventsPerWatcherMax int `json:"events_per_watcher_max"`
	// Mismatched is how many watchers did not receive every event once
	// (Mismatches says how, for the first few).
	Mismatched int      `json:"mismatched_watchers"`
	Mismatches []string `json:"mismatches,omitempty"`
	// WaitSeconds is the time from the last acknowledgement until every
	// watcher had every event (or deliveries stalled for deliveryStall).
	WaitSeconds float64 `json:"wait_seconds"`
	// EventsSentPerNode is each member's metalog_watch_events_sent_total.
	EventsSentPerNode []int64 `json:"events_sent_per_node"`
}

// memberMemory is the cluster's members' memory at one time, by node.
type memberMemory struct{ rss, heap, goroutines []int64 }

// memory reads each member's VmRSS, go_memstats_heap_inuse_bytes and
// go_goroutines.
func (c *cluster) memory(ctx context.Context) (memberMemory, error) {
	var m memberMemory
	for _, nd := range c.nodes {
		rss, err := currentRSS(nd.cmd.Process.Pid)
		if err != nil {
			return m, err
		}
		v, err := nd.metrics(ctx, "go_memstats_heap_inuse_bytes", "go_goroutines")
		if err != nil {
			return m, err
		}
		m.rss, m.heap, m.goroutines = append(m.rss, rss), append(m.heap, int64(v[0])), append(m.goroutines, int64(v[1]))
	}
	return m, nil
}

// perWatcher is the growth of the sum of v from before to after, over n.
func perWatcher(before, after []int64, n int) float64 {
	var d int64
	for i := range after {
		d += after[i] - before[i]
	}
	return float64(d) / float64(n)
}

// metricPerNode reads the unlabelled sample name of every member.
func (c *cluster) metricPerNode(ctx context.Context, name string) ([]int64, error) {
	var out []int64
	for _, nd := range c.nodes {
		v, err := nd.metric(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, int64(v))
	}
	return out, nil
}

// openFeeds opens o.Watchers watches from now, round-robin over the
// phase's feedNodes, and fills idle with what they cost the members.
func (p *phase) openFeeds(ctx context.Context, o *WatchOptions, idle *IdleFigures) (*feeds, error) {
	n := o.Watchers
	before, err := p.c.memory(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	f, err := p.startFeeds(ctx, n, o.StreamsPerConnection, o.Tables)
	if err != nil {
		return nil, err
	}
	idle.OpenSeconds = time.Since(start).Seconds()
	after, err := p.c.memory(ctx)
	if err == nil {
		idle.WatchersPerNode, err = p.c.metricPerNode(ctx, "metalog_watchers")
	}
	if err != nil {
		f.close()
		return nil, err
	}
	var sum int64
	for _, w := range idle.WatchersPerNode {
		sum += w
	}
	if sum != int64(n) {
		f.close()
		return nil, fmt.Errorf("bench: the members report %v watchers (metalog_watchers), %d in all; %d are open", idle.WatchersPerNode, sum, n)
	}
	idle.RSSBeforePerNodeBytes, idle.RSSAfterPerNodeBytes = before.rss, after.rss
	idle.RSSBytesPerWatcher = perWatcher(before.rss, after.rss, n)
	idle.HeapBytesPerWatcher = perWatcher(before.heap, after.heap, n)
	idle.GoroutinesPerWatcher = perWatcher(before.goroutines, after.goroutines, n)
	return f, nil
}

// feeds are the benchmark's watches and what they received. Times are
// durations since t0 in nanoseconds (never 0 once taken).
type feeds struct {
	t0     time.Time
	tables int
	// base is the epoch every feed started at: table i's epoch is
	// base+1+i, as the one client creates them in turn.
	base uint64
	ws   []*watcher
	// clients are the watchers' clients, each shared by up to
	// WatchOptions.StreamsPerConnection watchers of one member.
	clients []*client.Client
	// acks holds each table's acknowledgement time, by epoch-base-1 (the
	// DDL client's goroutine writes it); badAcks counts acknowledgements
	// of epochs out of (base, base+tables].
	acks    []int64
	badAcks atomic.Int64
	// delivered counts the epochs in range received, by every feed.
	delivered atomic.Int64
	waited    time.Duration

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// watcher is one watch and what it received; its fields are its
// goroutine's until feeds.close returns (from, before it reports ready).
type watcher struct {
	node     *node
	follower bool
	cl       *client.Client
	from     uint64 // the epoch of its first progress message
	last     uint64 // the epoch of the last events message
	// recv holds each table's receive time by epoch-from-1 (followers
	// only: their times are compared with the acknowledgements).
	recv   []int64
	events int   // events received of the tables' epochs
	stray  int   // messages out of range, out of order, or of another type
	err    error // how the watch ended, when not by close
}

// startFeeds starts n watchers, round-robin over the phase's feedNodes,
// perConn of one member to a client, and waits until each has its first
// progress message, all at the same epoch.
func (p *phase) startFeeds(ctx context.Context, n, perConn, tables int) (*feeds, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := &feeds{t0: time.Now(), tables: tables, acks: make([]int64, tables), cancel: cancel}
	ready := make(chan error, n)
	to := p.feedNodes()
	nodes := len(to)
	cur := make([]*client.Client, nodes) // each member's newest client
	for i := range n {
		nd := to[i%nodes]
		// Watcher i is the (i/nodes)th of its member.
		if (i/nodes)%perConn == 0 {
			cl, err := nd.client()
			if err != nil {
				f.close()
				return nil, err
			}
			f.clients = append(f.clients, cl)
			cur[i%nodes] = cl
		}
		w := &watcher{node: nd, follower: nd != p.leader, cl: cur[i%nodes]}
		if w.follower {
			w.recv = make([]int64, tables)
		}
		f.ws = append(f.ws, w)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			w.run(ctx, f, ready)
		}()
	}
	if err := f.waitReady(ctx, ready); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// waitReady waits for every watcher's first progress message, bounded,
// and sets f.base.
func (f *feeds) waitReady(ctx context.Context, ready <-chan error) error {
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	for range f.ws {
		select {
		case err := <-ready:
			if err != nil {
				return fmt.Errorf("bench: opening a watch: %w", err)
			}
		case <-timeout.C:
			return fmt.Errorf("bench: the %d watches did not all get their first progress message within 2 minutes", len(f.ws))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.base = f.ws[0].from
	for i, w := range f.ws {
		if w.from != f.base {
			return fmt.Errorf("bench: watcher %d on %s started at epoch %d, watcher 0 on %s at %d, although every member had applied the leader's index", i, w.node.name, w.from, f.ws[0].node.name, f.base)
		}
	}
	return nil
}

// run opens the watch, reports on ready once it has its first progress
// message (or the error that came first), and notes what it receives
// until ctx ends.
func (w *watcher) run(ctx context.Context, f *feeds, ready chan<- error) {
	stream, err := w.cl.Watch(ctx, &pb.WatchRequest{})
	var m *pb.WatchResponse
	if err == nil {
		m, err = stream.Recv()
	}
	if err == nil && client.WatchTypeOf(m) != client.WatchProgress {
		err = fmt.Errorf("%s: first message %s at epoch %d, want progress", w.node.name, m.Type, m.Epoch)
	}
	if err != nil {
		ready <- err
		return
	}
	w.from, w.last = m.Epoch, m.Epoch
	ready <- nil
	for {
		m, err := stream.Recv()
		at := int64(time.Since(f.t0))
		if err != nil {
			if ctx.Err() == nil {
				w.err = err
			}
			return
		}
		if n := w.note(m, at, f.tables); n > 0 {
			f.delivered.Add(int64(n))
		}
	}
}

// note notes m, received at at, and returns how many tables' epochs it
// brought, in order (a message may hold several consecutive epochs).
func (w *watcher) note(m *pb.WatchResponse, at int64, tables int) int {
	if client.WatchTypeOf(m) == client.WatchProgress && m.Epoch == w.last {
		return 0
	}
	if client.WatchTypeOf(m) != client.WatchEvents {
		w.stray++
		w.last = max(w.last, m.Epoch)
		return 0
	}
	n := 0
	for _, e := range m.Events {
		if e.Epoch != w.last+1 || e.Epoch > w.from+uint64(tables) {
			w.stray++
			w.last = max(w.last, e.Epoch)
			continue
		}
		w.last = e.Epoch
		w.events++
		n++
		if w.recv != nil {
			w.recv[e.Epoch-w.from-1] = at
		}
	}
	w.last = max(w.last, m.Epoch)
	return n
}

// ack notes table i's acknowledgement (createTables's ack).
func (f *feeds) ack(_ int, resp *pb.ExecuteResponse, at time.Time) {
	if resp.Epoch <= f.base || resp.Epoch > f.base+uint64(f.tables) {
		f.badAcks.Add(1)
		return
	}
	f.acks[resp.Epoch-f.base-1] = int64(at.Sub(f.t0))
}

// deliveryStall is how long wait waits with no delivery before it gives
// up on the missing ones (which delivery then reports).
const deliveryStall = 30 * time.Second

// wait waits until every watcher has every table's epoch, or deliveries
// stall for deliveryStall.
func (f *feeds) wait(ctx context.Context) error {
	want := int64(len(f.ws) * f.tables)
	start := time.Now()
	last, changed := int64(-1), start
	for {
		d := f.delivered.Load()
		if d != last {
			last, changed = d, time.Now()
		}
		if d >= want || time.Since(changed) > deliveryStall {
			f.waited = time.Since(start)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// close ends every watch and closes the watchers' clients; then their
// fields may be read.
func (f *feeds) close() {
	f.once.Do(func() {
		f.cancel()
		f.wg.Wait()
		for _, cl := range f.clients {
			cl.Close()
		}
	})
}

// delivery ends the watches and sums up what they received, with the
// members' metalog_watch_events_sent_total.
func (f *feeds) delivery(ctx context.Context, c *cluster) (DeliveryFigures, error) {
	d := DeliveryFigures{WaitSeconds: f.waited.Seconds(), EventsPerWatcherMin: math.MaxInt}
	var err error
	if d.EventsSentPerNode, err = c.metricPerNode(ctx, "metalog_watch_events_sent_total"); err != nil {
		return d, err
	}
	f.close()
	if n := f.badAcks.Load(); n > 0 {
		return d, fmt.Errorf("bench: %d acknowledgements were of epochs outside %d to %d, the tables' (something else changed the schema)", n, f.base+1, f.base+uint64(f.tables))
	}
	followers := 0
	for _, w := range f.ws {
		if w.follower {
			followers++
		}
	}
	lags := make([]time.Duration, 0, followers*f.tables)
	for i, w := range f.ws {
		d.EventsPerWatcherMin, d.EventsPerWatcherMax = min(d.EventsPerWatcherMin, w.events), max(d.EventsPerWatcherMax, w.events)
		if why := w.problem(f.tables); why != "" {
			d.Mismatched++
			if len(d.Mismatches) < 10 {
				d.Mismatches = append(d.Mismatches, fmt.Sprintf("watcher %d on %s: %s", i, w.node.name, why))
			}
		}
		if w.follower {
			d.FollowerWatchers++
			lags = w.lags(f.acks, lags)
		}
	}
	d.Pairs = len(lags)
	if len(lags) > 0 {
		slices.Sort(lags)
		d.MinMs, d.P50Ms, d.P99Ms, d.MaxMs = ms(lags[0]), ms(percentile(lags, 0.50)), ms(percentile(lags, 0.99)), ms(lags[len(lags)-1])
	}
	return d, nil
}

// problem says how the watcher's feed differs from every table's event
// once, or "" when it does not.
func (w *watcher) problem(tables int) string {
	switch {
	case w.err != nil:
		return fmt.Sprintf("the watch ended after epoch %d: %v", w.last, w.err)
	case w.events != tables:
		return fmt.Sprintf("received %d events of %d (epochs %d to %d), the last at epoch %d", w.events, tables, w.from+1, w.from+uint64(tables), w.last)
	case w.stray > 0:
		return fmt.Sprintf("%d messages out of order, out of range or not events", w.stray)
	}
	return ""
}

// lags appends to out the receive time less the acknowledgement time of
// every table's epoch the watcher received.
func (w *watcher) lags(acks []int64, out []time.Duration) []time.Duration {
	for i, at := range w.recv {
		if at != 0 && acks[i] != 0 {
			out = append(out, time.Duration(at-acks[i]))
		}
	}
	return out
}
