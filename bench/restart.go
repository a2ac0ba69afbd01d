package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/buildinfo"
)

// RecoveryOptions configures the restart and catch-up benchmarks.
type RecoveryOptions struct {
	// Binary is the metalog executable. Required.
	Binary string
	// Tables is the number of tables in the cluster (restart) or created
	// while a follower is down (catchup). Default 10000.
	Tables int
	// Kill stops the node with SIGKILL instead of a drain (restart only).
	Kill bool
	// ServeArgs are extra arguments for every `metalog serve`.
	ServeArgs []string
	// Progress, if set, receives a progress line every second while the
	// tables are created.
	Progress io.Writer
}

// RecoveryResult reports one recovery measurement.
type RecoveryResult struct {
	Benchmark string `json:"benchmark"`
	// Version is the module version of the metalog binary that ran the
	// benchmark (and started its members), as `metalog version` prints it.
	Version string  `json:"version"`
	Tables  int     `json:"tables"`
	Kill    bool    `json:"kill,omitempty"`
	Seconds float64 `json:"seconds"`
	// Entries is the number of log entries the follower replayed, and
	// ReplaySeconds the time from its first applied entry past where it
	// stopped to its last (catchup only; Seconds also counts the process
	// start and the leader finding it again).
	Entries       uint64  `json:"entries,omitempty"`
	ReplaySeconds float64 `json:"replay_seconds,omitempty"`
	// EntriesPerSecond is Entries over ReplaySeconds (catchup only).
	EntriesPerSecond float64 `json:"entries_per_second,omitempty"`
	// CPUSeconds is the user and system CPU time of the catching-up
	// member's process, from its start to caught up, and
	// CPUPerEntryMicros that over Entries (catchup only, on systems with
	// /proc; it also counts the process's start and the store's load).
	CPUSeconds        float64 `json:"cpu_seconds,omitempty"`
	CPUPerEntryMicros float64 `json:"cpu_per_entry_us,omitempty"`
	DiskBytes         int64   `json:"disk_bytes"`
}

func (o *RecoveryOptions) defaults() {
	if o.Tables == 0 {
		o.Tables = 10000
	}
}

// client returns a client of the node's client address.
func (nd *node) client() (*client.Client, error) {
	return connect(nd.grpcAddr, nil, "")
}

// createTables creates keyspace ks and n tables in requests of many
// statements each (loading, not the measured part).
func createTables(ctx context.Context, c *client.Client, rf, n int, w io.Writer) error {
	// See Tables: no per-table warning past the default threshold.
	if _, err := c.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "-1"}}); err != nil {
		return fmt.Errorf("set guardrails: %w", err)
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", rf)}); err != nil {
		return err
	}
	const per = 1000
	var done atomic.Int64
	defer progress(w, n, &done)()
	for i := 0; i < n; i += per {
		var b strings.Builder
		for j := i; j < min(i+per, n); j++ {
			fmt.Fprintf(&b, "CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text);", j)
		}
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: b.String()}); err != nil {
			return fmt.Errorf("loading tables %d..: %w", i, err)
		}
		done.Store(int64(min(i+per, n)))
	}
	return nil
}

// Restart measures the time from starting a one-node member holding
// Tables tables to its /readyz answering 200.
func Restart(ctx context.Context, o RecoveryOptions) (*RecoveryResult, error) {
	o.defaults()
	dir, err := os.MkdirTemp("", "metalog-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c, err := startCluster(ctx, o.Binary, dir, 1, o.ServeArgs, nil, false)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	nd := c.nodes[0]
	cl, err := nd.client()
	if err != nil {
		return nil, err
	}
	err = createTables(ctx, cl, 1, o.Tables, o.Progress)
	cl.Close()
	if err != nil {
		return nil, err
	}
	if o.Kill {
		nd.cmd.Process.Kill()
		<-nd.exited
		nd.log.Close()
	} else {
		nd.stopNode()
	}
	start := time.Now()
	if err := nd.start(o.Binary, append([]string{"--initial-cluster", nd.name + "=" + nd.peerAddr}, o.ServeArgs...)); err != nil {
		return nil, err
	}
	if err := nd.waitReady(ctx); err != nil {
		return nil, err
	}
	took := time.Since(start)
	disk, _ := diskBytes(nd.dir)
	return &RecoveryResult{Benchmark: "restart", Version: buildinfo.Read().Version, Tables: o.Tables, Kill: o.Kill, Seconds: took.Seconds(), DiskBytes: disk}, nil
}

// Catchup stops one follower of a 3-member cluster, creates Tables tables
// (one statement per request, from catchupClients clients) while it is
// down, restarts it and measures until it has applied them all. The log
// is kept (the snapshot interval is raised above Tables), so this measures
// catch-up through log replication; Rebuild measures the snapshot path.
func Catchup(ctx context.Context, o RecoveryOptions) (*RecoveryResult, error) {
	o.defaults()
	dir, err := os.MkdirTemp("", "metalog-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	args := append([]string{"--snapshot-interval-entries", strconv.Itoa(2*o.Tables + 1000)}, o.ServeArgs...)
	c, err := startCluster(ctx, o.Binary, dir, 3, args, nil, false)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	var ic []string
	for _, nd := range c.nodes {
		ic = append(ic, nd.name+"="+nd.peerAddr)
	}
	cl, err := c.nodes[0].client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if _, err := cl.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "-1"}}); err != nil {
		return nil, fmt.Errorf("set guardrails: %w", err)
	}
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"}); err != nil {
		return nil, err
	}
	lagging := c.nodes[2]
	from, err := lagging.waitApplied(ctx, c.nodes[0])
	if err != nil {
		return nil, err
	}
	lagging.stopNode()
	if err := createConcurrently(ctx, cl, o.Tables, catchupClients, o.Progress); err != nil {
		return nil, err
	}
	target, err := c.nodes[0].metric(ctx, "metalog_raft_applied_index")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := lagging.start(o.Binary, append([]string{"--initial-cluster", strings.Join(ic, ",")}, args...)); err != nil {
		return nil, err
	}
	// Poll the follower's applied index: the first sample past where it
	// stopped starts the replay, the first at the leader's index ends it.
	var replayStart time.Time
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		applied, err := lagging.metric(wctx, "metalog_raft_applied_index")
		if err == nil {
			if applied > from && replayStart.IsZero() {
				replayStart = time.Now()
			}
			if applied >= target {
				break
			}
		}
		select {
		case <-lagging.exited:
			return nil, fmt.Errorf("%s exited while catching up (log: %s.log)", lagging.name, lagging.dir)
		case <-wctx.Done():
			return nil, fmt.Errorf("waiting for %s to apply index %d: %w", lagging.name, target, wctx.Err())
		case <-time.After(catchupPoll):
		}
	}
	took := time.Since(start)
	replay := time.Since(replayStart)
	entries := target - from
	disk, _ := diskBytes(lagging.dir)
	r := &RecoveryResult{Benchmark: "catchup", Version: buildinfo.Read().Version, Tables: o.Tables, Seconds: took.Seconds(),
		Entries: entries, ReplaySeconds: replay.Seconds(),
		EntriesPerSecond: float64(entries) / replay.Seconds(), DiskBytes: disk}
	return r, r.addCPU(lagging.cmd.Process.Pid)
}

// addCPU sets the CPU figures of a catch-up from the process pid of the
// member that caught up, where /proc tells them.
func (r *RecoveryResult) addCPU(pid int) error {
	if !procCountersMeasured {
		return nil
	}
	pc, err := readProcCounters(pid)
	if err != nil {
		return err
	}
	r.CPUSeconds, r.CPUPerEntryMicros = pc.CPUSeconds, pc.CPUSeconds*1e6/float64(r.Entries)
	return nil
}

// catchupPoll is how often Catchup reads the follower's applied index, so
// the replay's start and end are known within it. Each read is a whole
// /metrics scrape (the Go runtime's memory statistics stop the world), a
// load on the member being measured: at every 2 ms it took a share of the
// replay's CPU.
const catchupPoll = 10 * time.Millisecond

// catchupClients is how many clients load the tables Catchup replays.
const catchupClients = 32

// createConcurrently creates ks.t_0 .. ks.t_{n-1}, one statement per
// request, from clients goroutines sharing c.
func createConcurrently(ctx context.Context, c *client.Client, n, clients int, w io.Writer) error {
	var next, done atomic.Int64
	defer progress(w, n, &done)()
	errs := make(chan error, clients)
	for range clients {
		go func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					errs <- nil
					return
				}
				if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)", i)}); err != nil {
					next.Store(int64(n)) // stop the others
					errs <- fmt.Errorf("table %d: %w", i, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	var first error
	for range clients {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
