package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTablesProtocols runs the tables benchmark at a small size on one
// real member over each protocol: the run says its protocol, and the
// member holds every table (Tables counts them through gRPC, so the CQL
// run's tables were made by its gocql sessions: setup creates none).
func TestTablesProtocols(t *testing.T) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolCQL} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			const tables, clients = 50, 3
			r, err := Tables(ctx, TablesOptions{Binary: metalogBinary, Dir: t.TempDir(), Nodes: 1, Tables: tables, Clients: clients, Buckets: 5, Protocol: protocol})
			if err != nil {
				t.Fatal(err)
			}
			if r.Protocol != protocol || r.Tables != tables || r.Clients != clients || r.Nodes != 1 || r.Target != TargetAll {
				t.Errorf("run described as %+v, want protocol %s, %d tables, %d clients, 1 node, target all", r, protocol, tables, clients)
			}
			if len(r.BucketMeanMs) != 5 || r.OpsPerSecond <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
				t.Errorf("latency figures %+v: want 5 buckets, positive ops/s, 0 < p50 <= p99", r)
			}
		})
	}
}

// TestTablesProtocolErrors: a DDL the member refuses fails the run over
// either protocol, naming the table and the member's reason.
func TestTablesProtocolErrors(t *testing.T) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolCQL} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := Tables(ctx, TablesOptions{Binary: metalogBinary, Dir: t.TempDir(), Nodes: 1, Tables: 5, Buckets: 1, Protocol: protocol,
				Statement: "CREATE TABLE ks.t_%d (id int PRIMARY KEY, v nosuchtype)"})
			if err == nil || !strings.Contains(err.Error(), "bench: table 0: ") || !strings.Contains(err.Error(), "nosuchtype") {
				t.Errorf("run of a refused DDL over %s: error %v, want table 0 refused, naming nosuchtype", protocol, err)
			}
		})
	}
}

// TestTablesProtocolValidation: an unknown protocol, and CQL against
// endpoints the benchmark did not start, are refused before anything
// starts.
func TestTablesProtocolValidation(t *testing.T) {
	for _, o := range []TablesOptions{
		{Binary: "unused", Protocol: "http"},
		{Endpoints: []string{"127.0.0.1:1"}, Protocol: ProtocolCQL},
		{Binary: "unused", NoSchemaAgreement: true},
	} {
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--protocol") {
			t.Errorf("options %+v: error %v, want a refusal naming --protocol", o, err)
		}
	}
	o := TablesOptions{Binary: "unused"}
	if err := o.validate(); err != nil || o.Protocol != ProtocolGRPC {
		t.Errorf("default options: error %v, protocol %q, want none and %s", err, o.Protocol, ProtocolGRPC)
	}
}

// TestCQLSessionSchemaAgreement: a bench session waits for schema
// agreement after each DDL by default, which reads system.peers, whose
// rows the member (either: the driver finds both) answers with a status
// call to the other member; with agreement off it makes no such reads,
// and the DDL still succeeds.
func TestCQLSessionSchemaAgreement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := startCluster(ctx, metalogBinary, t.TempDir(), 2, nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	nd := c.nodes[0]
	const ddls = 10
	calls := map[bool]uint64{}
	for _, agreement := range []bool{true, false} {
		s, err := cqlSession(ctx, nd.cqlAddr, agreement)
		if err != nil {
			t.Fatal(err)
		}
		before, err := c.statusCalls(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ks := fmt.Sprintf("ks_%v", agreement)
		if err := s.Query("CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").Exec(); err != nil {
			t.Fatal(err)
		}
		for i := range ddls - 1 {
			if err := s.Query(fmt.Sprintf("CREATE TABLE %s.t_%d (id int PRIMARY KEY)", ks, i)).Exec(); err != nil {
				t.Fatalf("agreement %v: DDL %d: %v", agreement, i, err)
			}
		}
		s.Close()
		after, err := c.statusCalls(ctx)
		if err != nil {
			t.Fatal(err)
		}
		calls[agreement] = after - before
	}
	// The member's membership poll adds a call every 5 s to either count.
	if calls[true] < ddls || calls[false] >= calls[true]/2 {
		t.Errorf("status calls for %d DDLs: %d with agreement, %d without; want at least one a DDL with, under half that without", ddls, calls[true], calls[false])
	}
}

// statusCalls sums metalog_cluster_status_calls_total over c's members.
func (c *cluster) statusCalls(ctx context.Context) (uint64, error) {
	var sum uint64
	for _, nd := range c.nodes {
		n, err := nd.metric(ctx, "metalog_cluster_status_calls_total")
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}
