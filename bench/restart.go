package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
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
}

// RecoveryResult reports one recovery measurement.
type RecoveryResult struct {
	Benchmark string  `json:"benchmark"`
	Tables    int     `json:"tables"`
	Kill      bool    `json:"kill,omitempty"`
	Seconds   float64 `json:"seconds"`
	// EntriesPerSecond is the catch-up rate (catchup only).
	EntriesPerSecond float64 `json:"entries_per_second,omitempty"`
	DiskBytes        int64   `json:"disk_bytes"`
}

func (o *RecoveryOptions) defaults() {
	if o.Tables == 0 {
		o.Tables = 10000
	}
}

// client dials a node.
func (nd *node) client() (pb.MetadataServiceClient, func(), error) {
	conn, err := grpc.NewClient(nd.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return nil, nil, err
	}
	return pb.NewMetadataServiceClient(conn), func() { conn.Close() }, nil
}

// createTables creates keyspace ks and n tables in requests of many
// statements each (loading, not the measured part).
func createTables(ctx context.Context, c pb.MetadataServiceClient, rf, n int) error {
	// See Tables: no per-table warning past the default threshold.
	if _, err := c.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "-1"}}); err != nil {
		return fmt.Errorf("set guardrails: %w", err)
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", rf)}); err != nil {
		return err
	}
	const per = 1000
	for i := 0; i < n; i += per {
		var b strings.Builder
		for j := i; j < min(i+per, n); j++ {
			fmt.Fprintf(&b, "CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text);", j)
		}
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: b.String()}); err != nil {
			return fmt.Errorf("loading tables %d..: %w", i, err)
		}
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
	c, err := startCluster(ctx, o.Binary, dir, 1, o.ServeArgs)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	nd := c.nodes[0]
	cl, closeConn, err := nd.client()
	if err != nil {
		return nil, err
	}
	err = createTables(ctx, cl, 1, o.Tables)
	closeConn()
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
	return &RecoveryResult{Benchmark: "restart", Tables: o.Tables, Kill: o.Kill, Seconds: took.Seconds(), DiskBytes: disk}, nil
}

// Catchup stops one follower of a 3-member cluster, creates Tables tables
// one statement at a time, restarts the follower and measures the time
// until it has applied them all.
func Catchup(ctx context.Context, o RecoveryOptions) (*RecoveryResult, error) {
	o.defaults()
	dir, err := os.MkdirTemp("", "metalog-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c, err := startCluster(ctx, o.Binary, dir, 3, o.ServeArgs)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	var ic []string
	for _, nd := range c.nodes {
		ic = append(ic, nd.name+"="+nd.peerAddr)
	}
	cl, closeConn, err := c.nodes[0].client()
	if err != nil {
		return nil, err
	}
	defer closeConn()
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"}); err != nil {
		return nil, err
	}
	lagging := c.nodes[2]
	lagging.stopNode()
	var epoch uint64
	for i := range o.Tables {
		r, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)", i)})
		if err != nil {
			return nil, fmt.Errorf("table %d: %w", i, err)
		}
		epoch = r.Epoch
	}
	start := time.Now()
	if err := lagging.start(o.Binary, append([]string{"--initial-cluster", strings.Join(ic, ",")}, o.ServeArgs...)); err != nil {
		return nil, err
	}
	if err := lagging.waitReady(ctx); err != nil {
		return nil, err
	}
	lc, closeLagging, err := lagging.client()
	if err != nil {
		return nil, err
	}
	defer closeLagging()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if _, err := lc.GetKeyspace(wctx, &pb.GetKeyspaceRequest{Keyspace: "ks", MinEpoch: epoch}); err != nil {
		return nil, fmt.Errorf("waiting for the follower to reach epoch %d: %w", epoch, err)
	}
	took := time.Since(start)
	disk, _ := diskBytes(lagging.dir)
	return &RecoveryResult{Benchmark: "catchup", Tables: o.Tables, Seconds: took.Seconds(),
		EntriesPerSecond: float64(o.Tables) / took.Seconds(), DiskBytes: disk}, nil
}
