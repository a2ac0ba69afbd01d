package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/buildinfo"
)

// TablesOptions configures the table-creation benchmark.
type TablesOptions struct {
	// Binary is the metalog executable to start. Required unless Endpoints
	// is set.
	Binary string
	// Endpoints targets a running cluster (gRPC addresses) instead of
	// starting one; the keyspace "ks" must not exist there yet.
	Endpoints []string
	// TLS and Token are the clients' credentials for a secured cluster at
	// Endpoints (client.Config.TLS and Token); the benchmark needs the
	// ddl, operator (tables_warn_threshold) and reader roles. Nil and
	// empty mean plaintext without authentication.
	TLS   *tls.Config
	Token string
	// Dir is the parent of the members' data dirs; default a temp dir
	// removed at the end.
	Dir string
	// Nodes is the number of members to start (1, 3 or 5). Default 3.
	Nodes int
	// Tables is the number of CREATE TABLE statements. Default 10000.
	Tables int
	// Clients is the number of concurrent clients. Default 1.
	Clients int
	// Buckets is the number of consecutive slices of the ops whose mean
	// latency is reported. Default 10.
	Buckets int
	// Statement formats the DDL for table i; default
	// "CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)".
	Statement string
	// Target says which members the clients send to when the benchmark
	// starts the cluster: TargetAll (default), TargetLeader or
	// TargetFollowers. With Endpoints, clients go round-robin over them.
	Target string
	// Protocol is how the clients send the timed DDL: ProtocolGRPC
	// (default) or ProtocolCQL. The setup (guardrail, keyspace, warm-up)
	// and the final count go through gRPC either way.
	Protocol string
	// NoSchemaAgreement, over CQL, turns off the driver's wait for schema
	// agreement after each DDL (see ProtocolCQL), so that the DDL alone is
	// timed, as over gRPC, whose Execute answers once the member that took
	// it has applied it.
	NoSchemaAgreement bool
	// MemberGOMAXPROCS, if positive, sets GOMAXPROCS for every member the
	// benchmark starts (not for the benchmark's clients): members sharing
	// one machine each get their share of its cores instead of all of them.
	MemberGOMAXPROCS int
	// ServeArgs are extra arguments for every `metalog serve`.
	ServeArgs []string
	// Progress, if set, receives a progress line every second.
	Progress io.Writer
}

// memberEnv is the environment added to the members' processes.
func (o *TablesOptions) memberEnv() []string {
	if o.MemberGOMAXPROCS > 0 {
		return []string{"GOMAXPROCS=" + strconv.Itoa(o.MemberGOMAXPROCS)}
	}
	return nil
}

// Targets of TablesOptions.Target.
const (
	// TargetAll spreads the clients round-robin over every member, the
	// first client on the first member, whichever member leads: as the
	// etcd peer benchmark does.
	TargetAll = "all"
	// TargetLeader sends every client to the leader (found before the
	// timed phase), as a client that routes DDL to the leader would.
	TargetLeader = "leader"
	// TargetFollowers spreads the clients over the other members, so
	// every DDL is forwarded to the leader.
	TargetFollowers = "followers"
)

// Protocols of TablesOptions.Protocol.
const (
	// ProtocolGRPC sends each DDL as an Execute of metalog's gRPC API,
	// through package client: one connection per member targeted, shared
	// by the clients sending there.
	ProtocolGRPC = "grpc"
	// ProtocolCQL sends each DDL as a QUERY of Cassandra's native protocol
	// (v4) through the gocql driver, to the CQL listener every member the
	// benchmark starts has (serve --cql-addr): one session per member
	// targeted, with one connection for queries (NumConns 1, besides the
	// driver's control connection), shared by the clients sending there,
	// as the gRPC clients share theirs. The driver's own work per DDL is
	// counted: after each schema change gocql reads system.peers and
	// system.local (its schema agreement: every member at the same
	// schema_version, or a sleep of 200 ms and another look) before it
	// returns, unless TablesOptions.NoSchemaAgreement. The sessions do not
	// register for schema events (see cqlSession).
	ProtocolCQL = "cql"
)

func (o *TablesOptions) validate() error {
	if o.Target == "" {
		o.Target = TargetAll
	}
	if o.Protocol == "" {
		o.Protocol = ProtocolGRPC
	}
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Tables == 0 {
		o.Tables = 10000
	}
	if o.Clients == 0 {
		o.Clients = 1
	}
	if o.Buckets == 0 {
		o.Buckets = 10
	}
	if o.Statement == "" {
		o.Statement = "CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)"
	}
	switch {
	case len(o.Endpoints) == 0 && o.Binary == "":
		return errors.New("bench: a binary to start or --endpoints is required")
	case o.Nodes < 1:
		return fmt.Errorf("bench: --nodes %d: want at least 1", o.Nodes)
	case o.Tables < 1:
		return fmt.Errorf("bench: --tables %d: want at least 1", o.Tables)
	case o.Clients < 1:
		return fmt.Errorf("bench: --clients %d: want at least 1", o.Clients)
	case o.Buckets < 1 || o.Buckets > o.Tables:
		return fmt.Errorf("bench: --buckets %d: want 1 to --tables (%d)", o.Buckets, o.Tables)
	case o.MemberGOMAXPROCS < 0:
		return fmt.Errorf("bench: --member-gomaxprocs %d: want 0 (the runtime's default) or more", o.MemberGOMAXPROCS)
	case o.Target != TargetAll && o.Target != TargetLeader && o.Target != TargetFollowers:
		return fmt.Errorf("bench: --target %q: want %s, %s or %s", o.Target, TargetAll, TargetLeader, TargetFollowers)
	case o.Target == TargetFollowers && o.Nodes < 2 && len(o.Endpoints) == 0:
		return fmt.Errorf("bench: --target %s needs at least 2 nodes", TargetFollowers)
	case len(o.Endpoints) > 0 && o.Target != TargetAll:
		return fmt.Errorf("bench: --target %s needs the benchmark to start the cluster; with --endpoints, clients go round-robin", o.Target)
	case o.Protocol != ProtocolGRPC && o.Protocol != ProtocolCQL:
		return fmt.Errorf("bench: --protocol %q: want %s or %s", o.Protocol, ProtocolGRPC, ProtocolCQL)
	case o.NoSchemaAgreement && o.Protocol != ProtocolCQL:
		return fmt.Errorf("bench: --no-schema-agreement is a setting of the CQL driver: it needs --protocol %s", ProtocolCQL)
	case o.Protocol == ProtocolCQL && len(o.Endpoints) > 0:
		return fmt.Errorf("bench: --protocol %s needs the benchmark to start the cluster (it gives each member a CQL listener); --endpoints are gRPC addresses", ProtocolCQL)
	case !strings.Contains(o.Statement, "%d"):
		return fmt.Errorf("bench: statement %q needs a %%d for the table number", o.Statement)
	}
	return nil
}

// Result holds the figures, with the field names of the etcd peer
// benchmark (see BENCHMARKS.md) so the two JSON objects compare side by
// side.
type Result struct {
	System         string    `json:"system"`
	Version        string    `json:"version"`
	Nodes          int       `json:"nodes"`
	Tables         int       `json:"tables"`
	Clients        int       `json:"clients"`
	ValueBytes     int       `json:"value_bytes"`
	UnsafeNoFsync  bool      `json:"unsafe_no_fsync"`
	WallSeconds    float64   `json:"wall_seconds"`
	OpsPerSecond   float64   `json:"ops_per_second"`
	BucketMeanMs   []float64 `json:"bucket_mean_ms"`
	P50Ms          float64   `json:"p50_ms"`
	P99Ms          float64   `json:"p99_ms"`
	LastFirstRatio float64   `json:"last_first_ratio"`
	// PeakRSSBytes is the sum over the servers (etcd's figure covers its one
	// process holding every member).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	DiskBytes    int64 `json:"disk_bytes"`
	// PeakRSSPerNodeBytes is each server's VmHWM.
	PeakRSSPerNodeBytes []int64 `json:"peak_rss_per_node_bytes,omitempty"`
	// Target is which members the clients sent to (metalog only).
	Target string `json:"target,omitempty"`
	// Protocol is how the clients sent the DDL: grpc or cql (metalog
	// only).
	Protocol string `json:"protocol,omitempty"`
	// NoSchemaAgreement says the CQL clients did not wait for schema
	// agreement after each DDL (metalog only).
	NoSchemaAgreement bool `json:"no_schema_agreement,omitempty"`
	// MemberGOMAXPROCS is the members' GOMAXPROCS when the benchmark set
	// it (metalog only).
	MemberGOMAXPROCS int `json:"member_gomaxprocs,omitempty"`
	// ServerLoad is the members' CPU time and context switches during the
	// table phase (its fields are inlined in the JSON object).
	ServerLoad
}

// Tables runs the benchmark: one keyspace, then Tables CREATE TABLEs, each
// waiting for its acknowledgement.
func Tables(ctx context.Context, o TablesOptions) (*Result, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	eps, cqlAddrs := o.Endpoints, []string(nil)
	var c *cluster
	if len(eps) == 0 {
		var stop func()
		var err error
		if c, stop, err = o.startCluster(ctx); err != nil {
			return nil, err
		}
		defer stop()
		to, err := c.targets(ctx, o.Target)
		if err != nil {
			return nil, err
		}
		for _, nd := range to {
			eps, cqlAddrs = append(eps, nd.grpcAddr), append(cqlAddrs, nd.cqlAddr)
		}
	}
	clients, closeClients, err := o.prepare(ctx, eps)
	if err != nil {
		return nil, err
	}
	defer closeClients()
	senders, closeSenders, err := o.senders(ctx, clients, cqlAddrs)
	if err != nil {
		return nil, err
	}
	defer closeSenders()
	load := unmeasuredLoad(noteEndpoints)
	var before loadSample
	if c != nil {
		if before, err = c.startLoad(ctx); err != nil {
			return nil, err
		}
	}
	latencies, wall, err := o.createTables(ctx, senders, nil)
	if err != nil {
		return nil, err
	}
	// Done with the senders before the members stop, so that no driver
	// connection is left trying to reconnect to them.
	closeSenders()
	// The peak and the CPU are read now, at the end of the table phase:
	// the count below builds one response holding every table, which is a
	// read's cost, not what holding the tables costs.
	var peak []int64
	if c != nil {
		after, err := c.sampleLoad(ctx, before.leader)
		if err != nil {
			return nil, err
		}
		load = serverLoad(before, after, o.Tables)
		if peak, err = c.peakRSS(); err != nil {
			return nil, err
		}
	}
	ks, err := clients[0].GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks", Consistency: "linearizable"})
	if err != nil {
		return nil, fmt.Errorf("bench: count tables: %w", err)
	}
	if got := len(ks.Keyspace.Tables); got != o.Tables {
		return nil, fmt.Errorf("bench: cluster holds %d tables, want %d", got, o.Tables)
	}

	r := summarize(latencies, wall, o.Buckets)
	r.System, r.Version = "metalog", buildinfo.Read().Version
	r.Nodes, r.Tables, r.Clients, r.Target, r.MemberGOMAXPROCS = len(eps), o.Tables, o.Clients, o.Target, o.MemberGOMAXPROCS
	r.Protocol, r.NoSchemaAgreement = o.Protocol, o.NoSchemaAgreement
	r.ValueBytes = len(fmt.Sprintf(o.Statement, o.Tables/2))
	r.ServerLoad = load
	if c != nil {
		r.setPeakRSS(peak)
		if err := r.measureDisk(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// startCluster starts the members the benchmark runs against, in o.Dir or
// a temp dir; stop stops them and removes the temp dir.
func (o *TablesOptions) startCluster(ctx context.Context) (c *cluster, stop func(), err error) {
	dir, removeDir := o.Dir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "metalog-bench-")
		if err != nil {
			return nil, nil, err
		}
		dir, removeDir = tmp, func() { os.RemoveAll(tmp) }
	}
	if c, err = startCluster(ctx, o.Binary, dir, o.Nodes, o.ServeArgs, o.memberEnv(), o.Protocol == ProtocolCQL); err != nil {
		removeDir()
		return nil, nil, err
	}
	return c, func() { c.stop(); removeDir() }, nil
}

// prepare connects the benchmark's clients, raises tables_warn_threshold,
// creates the keyspace and warms every connection. Client i sends to
// endpoint i % len(eps) and nowhere else (one client.Client per endpoint,
// each on that endpoint alone).
func (o *TablesOptions) prepare(ctx context.Context, eps []string) (clients []*client.Client, closeAll func(), err error) {
	byEndpoint := make([]*client.Client, 0, len(eps))
	closeClients := func() {
		for _, c := range byEndpoint {
			c.Close()
		}
	}
	defer func() {
		if err != nil {
			closeClients()
		}
	}()
	for _, ep := range eps {
		c, err := connect(ep, o.TLS, o.Token)
		if err != nil {
			return nil, nil, err
		}
		byEndpoint = append(byEndpoint, c)
	}
	// The default tables_warn_threshold (1000) would log and return a
	// warning for every table past the thousandth; an operator creating
	// this many tables raises it, and so does the benchmark.
	if _, err := byEndpoint[0].SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "-1"}}); err != nil {
		return nil, nil, fmt.Errorf("bench: set guardrails: %w", err)
	}
	rf := min(len(eps), 3)
	created, err := byEndpoint[0].Execute(ctx, &pb.ExecuteRequest{
		Statements: fmt.Sprintf("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", rf),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("bench: create keyspace: %w", err)
	}
	clients = make([]*client.Client, o.Clients)
	for i := range clients {
		clients[i] = byEndpoint[i%len(byEndpoint)]
		// Warm the connection, so dialing is not counted in the first op.
		if _, err := clients[i].GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks", MinEpoch: created.Epoch}); err != nil {
			return nil, nil, fmt.Errorf("bench: warm up: %w", err)
		}
	}
	return clients, closeClients, nil
}

// createTables is the timed phase: the clients take the table numbers in
// turn, one CREATE TABLE each at a time, until o.Tables are acknowledged.
// It returns each table's latency and the wall time. ack, if not nil, is
// called with table i's answer (nil over CQL) and when it arrived, on the
// goroutine of the client that sent it.
func (o *TablesOptions) createTables(ctx context.Context, clients []ddlSender, ack func(i int, resp *pb.ExecuteResponse, at time.Time)) ([]time.Duration, time.Duration, error) {
	latencies := make([]time.Duration, o.Tables)
	var next, done atomic.Int64
	stopProgress := progress(o.Progress, o.Tables, &done)
	var wg sync.WaitGroup
	errc := make(chan error, len(clients))
	start := time.Now()
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= o.Tables || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				octx, cancel := context.WithTimeout(ctx, 30*time.Second)
				resp, err := cl.execute(octx, i, fmt.Sprintf(o.Statement, i))
				at := time.Now()
				cancel()
				if err != nil {
					errc <- fmt.Errorf("bench: table %d: %w", i, err)
					return
				}
				latencies[i] = at.Sub(t0)
				if ack != nil {
					ack(i, resp, at)
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	stopProgress()
	close(errc)
	if err := <-errc; err != nil {
		return nil, 0, err
	}
	return latencies, wall, ctx.Err()
}

// measureCluster adds the members' peak RSS, stops them and adds their
// data dirs' size on disk.
func (r *Result) measureCluster(c *cluster) error {
	peak, err := c.peakRSS()
	if err != nil {
		return err
	}
	r.setPeakRSS(peak)
	return r.measureDisk(c)
}

// peakRSS reads each member's peak RSS (VmHWM) so far, in member order.
func (c *cluster) peakRSS() ([]int64, error) {
	peak := make([]int64, 0, len(c.nodes))
	for _, nd := range c.nodes {
		rss, err := peakRSS(nd.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		peak = append(peak, rss)
	}
	return peak, nil
}

// setPeakRSS records the members' peak RSS and their sum.
func (r *Result) setPeakRSS(peak []int64) {
	r.PeakRSSPerNodeBytes = peak
	for _, rss := range peak {
		r.PeakRSSBytes += rss
	}
}

// measureDisk stops the members and adds their data dirs' size on disk.
func (r *Result) measureDisk(c *cluster) error {
	r.Nodes = len(c.nodes)
	c.stop()
	for _, nd := range c.nodes {
		b, err := diskBytes(nd.dir)
		if err != nil {
			return err
		}
		r.DiskBytes += b
	}
	return nil
}

// summarize computes the latency figures as the etcd peer does: bucket
// means over consecutive slices, nearest-rank percentiles.
func summarize(latencies []time.Duration, wall time.Duration, buckets int) *Result {
	r := &Result{WallSeconds: wall.Seconds(), OpsPerSecond: float64(len(latencies)) / wall.Seconds()}
	n := len(latencies)
	for b := range buckets {
		r.BucketMeanMs = append(r.BucketMeanMs, meanMs(latencies[b*n/buckets:(b+1)*n/buckets]))
	}
	r.LastFirstRatio = r.BucketMeanMs[len(r.BucketMeanMs)-1] / r.BucketMeanMs[0]
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	r.P50Ms = ms(percentile(sorted, 0.50))
	r.P99Ms = ms(percentile(sorted, 0.99))
	return r
}

func meanMs(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return ms(sum) / float64(len(ds))
}

// percentile returns the nearest-rank p-quantile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p * float64(len(sorted))))
	return sorted[max(rank-1, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// progress prints "done/total tables, ops/s" to w every second until
// stopped.
func progress(w io.Writer, total int, done *atomic.Int64) (stop func()) {
	return progressOf(w, "tables", total, done)
}

// progressOf is progress counting units other than tables (e.g. epochs).
func progressOf(w io.Writer, unit string, total int, done *atomic.Int64) (stop func()) {
	if w == nil {
		return func() {}
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		start, last := time.Now(), int64(0)
		for {
			select {
			case <-quit:
				fmt.Fprintf(w, "\r%d/%d %s in %.1fs%s\n", done.Load(), total, unit, time.Since(start).Seconds(), strings.Repeat(" ", 20))
				return
			case <-t.C:
				d := done.Load()
				fmt.Fprintf(w, "\r%d/%d %s, %d ops/s", d, total, unit, d-last)
				last = d
			}
		}
	}()
	return func() { close(quit); <-finished }
}
