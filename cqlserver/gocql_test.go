package cqlserver_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/schema"
)

// startMember starts a one-member cluster in a temporary directory and
// waits until it is ready; it is closed when the test ends.
func startMember(t *testing.T) *member.Member {
	t.Helper()
	m, err := member.Start(member.Config{
		DataDir: t.TempDir(), Name: "n1", PeerAddr: "127.0.0.1:0",
		RequestTimeout: 10 * time.Second, MaxMutationSize: 16 << 20,
		SnapshotEntries: 10000, SnapshotCatchUpEntries: 5000, SnapshotChunkSize: 2 << 20,
		SnapshotMaxConcurrentSends: 2, Guardrails: guardrails.Defaults(), MaxStatementsPerRequest: 10000,
		HistoryRetention: 1_000_000, WatchProgressInterval: 5 * time.Second, StoreScrubInterval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !m.Readiness().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("member not ready: %s", m.Readiness().Detail)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
	return m
}

// serve serves srv on a loopback port until the test ends.
func serve(t *testing.T, srv *cqlserver.Server) *net.TCPAddr {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case err := <-done:
			if !errors.Is(err, cqlserver.ErrServerClosed) {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return lis.Addr().(*net.TCPAddr)
}

// TestGocql connects gocql v1.7.0 as a program would, runs DDL through
// it and reads the schema back with its KeyspaceMetadata, with and
// without the initial host lookup (which changes the queries it makes).
func TestGocql(t *testing.T) {
	for _, lookup := range []bool{false, true} {
		t.Run(map[bool]string{false: "NoHostLookup", true: "HostLookup"}[lookup], func(t *testing.T) {
			testGocql(t, lookup)
		})
	}
}

// gocqlCluster serves m through a cqlserver on loopback until the test
// ends, its Config changed by mods, and returns a gocql configuration for
// it: protocol v4, one connection, bounded waits, no initial host lookup.
func gocqlCluster(t *testing.T, m *member.Member, mods ...func(*cqlserver.Config)) *gocql.ClusterConfig {
	t.Helper()
	cfg := cqlserver.Config{Writer: m.Writes(), Reader: m.Reads(), HostID: cqlserver.HostID(m.ID()),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	for _, mod := range mods {
		mod(&cfg)
	}
	srv := cqlserver.New(cfg)
	return gocqlAt(serve(t, srv).String())
}

// gocqlAt is a gocql configuration for the listener at addr: protocol v4,
// one connection, bounded waits, no initial host lookup.
func gocqlAt(addr string) *gocql.ClusterConfig {
	cluster := gocql.NewCluster(addr)
	cluster.ProtoVersion = 4
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.NumConns = 1
	cluster.DisableInitialHostLookup = true
	return cluster
}

func testGocql(t *testing.T, hostLookup bool) {
	m := startMember(t)
	cluster := gocqlCluster(t, m)
	cluster.DisableInitialHostLookup = !hostLookup
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	if err := session.Query(`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	create := `CREATE TABLE shop.orders (id uuid, at timestamp, note text, tags set<text>, PRIMARY KEY (id, at)) WITH CLUSTERING ORDER BY (at DESC)`
	if err := session.Query(create).Exec(); err != nil {
		t.Fatal(err)
	}

	if err := session.Query(strings.Replace(create, "TABLE", "TABLE IF NOT EXISTS", 1)).Exec(); err != nil {
		t.Fatalf("CREATE TABLE IF NOT EXISTS of an existing table: %v", err)
	}
	var exists *gocql.RequestErrAlreadyExists
	if err := session.Query(create).Exec(); !errors.As(err, &exists) {
		t.Fatalf("second CREATE TABLE: %T %v, want *gocql.RequestErrAlreadyExists", err, err)
	} else if exists.Keyspace != "shop" || exists.Table != "orders" {
		t.Errorf("already exists names %q.%q, want shop.orders", exists.Keyspace, exists.Table)
	}
	var syntax gocql.RequestError
	if err := session.Query(`CREATE TABEL shop.x (id int PRIMARY KEY)`).Exec(); !errors.As(err, &syntax) || syntax.Code() != gocql.ErrCodeSyntax {
		t.Fatalf("misspelt CREATE: %T %v, want a syntax error", err, err)
	}
	if err := session.Query(`SELECT * FROM shop.orders`).Exec(); !errors.As(err, &syntax) || syntax.Code() != gocql.ErrCodeInvalid {
		t.Fatalf("data SELECT: %T %v, want an invalid request", err, err)
	}

	compareKeyspace(t, session, m, "shop")
}

// compareKeyspace compares what gocql reads of a keyspace with what the
// member holds.
func compareKeyspace(t *testing.T, session *gocql.Session, m *member.Member, name string) {
	t.Helper()
	got, err := session.KeyspaceMetadata(name)
	if err != nil {
		t.Fatal(err)
	}
	md, err := m.Reads().Read(context.Background(), 0, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ks, ok := md.Schema.Keyspace(name)
	if !ok {
		t.Fatalf("member has no keyspace %s", name)
	}
	if got.StrategyClass != "org.apache.cassandra.locator.SimpleStrategy" {
		t.Errorf("strategy class %q", got.StrategyClass)
	}
	var want []string
	for _, tb := range ks.Tables() {
		want = append(want, tb.Name)
		gt, ok := got.Tables[tb.Name]
		if !ok {
			t.Errorf("gocql has no table %s", tb.Name)
			continue
		}
		compareTable(t, gt, tb)
	}
	var names []string
	for n := range got.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	sort.Strings(want)
	if len(names) != len(want) {
		t.Errorf("gocql tables %v, member tables %v", names, want)
	}
}

func compareTable(t *testing.T, gt *gocql.TableMetadata, tb *schema.Table) {
	t.Helper()
	cols := tb.Columns
	if len(gt.Columns) != len(cols) {
		t.Errorf("table %s: gocql has %d columns, member %d", tb.Name, len(gt.Columns), len(cols))
	}
	for _, c := range cols {
		gc, ok := gt.Columns[c.Name]
		if !ok {
			t.Errorf("table %s: gocql has no column %s", tb.Name, c.Name)
			continue
		}
		if want := systemschema.TypeText(c.Type); gc.Validator != want {
			t.Errorf("column %s.%s: gocql type %q, member %q", tb.Name, c.Name, gc.Validator, want)
		}
	}
	if len(gt.PartitionKey) != len(tb.PartitionKey) || len(gt.ClusteringColumns) != len(tb.Clustering) {
		t.Fatalf("table %s: gocql key %d+%d columns, member %d+%d", tb.Name,
			len(gt.PartitionKey), len(gt.ClusteringColumns), len(tb.PartitionKey), len(tb.Clustering))
	}
	for i, name := range tb.PartitionKey {
		if gt.PartitionKey[i].Name != name {
			t.Errorf("table %s: partition key %d is %s in gocql, %s in the member", tb.Name, i, gt.PartitionKey[i].Name, name)
		}
	}
	for i, cc := range tb.Clustering {
		gc := gt.ClusteringColumns[i]
		desc := gc.Order == gocql.DESC
		if gc.Name != cc.Name || desc != (cc.Order == schema.Desc) {
			t.Errorf("table %s: clustering column %d is %s desc=%v in gocql, %s %v in the member", tb.Name, i, gc.Name, desc, cc.Name, cc.Order)
		}
	}
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
