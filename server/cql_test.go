package server

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// startCQL starts a server on loopback ports, its CQL listener off, with
// cfg's changes, waits until it is ready, and closes it when the test
// ends.
func startCQL(t *testing.T, change func(*Config)) *Server {
	t.Helper()
	return startCQLLogged(t, change, nil)
}

// startCQLLogged is startCQL logging to logger.
func startCQLLogged(t *testing.T, change func(*Config), logger *slog.Logger) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.PeerAddr, cfg.CQLAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", ""
	change(&cfg)
	srv, err := Start(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !srv.member.Readiness().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("server not ready: %s", srv.member.Readiness().Detail)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
	return srv
}

// TestCQLListener: with cql_addr set, gocql connects to the server's CQL
// listener and runs DDL, which the gRPC API then shows.
func TestCQLListener(t *testing.T) {
	srv := startCQL(t, func(c *Config) { c.CQLAddr = "127.0.0.1:0" })
	host, port, err := net.SplitHostPort(srv.CQLAddr())
	if err != nil {
		t.Fatalf("CQLAddr %q: %v", srv.CQLAddr(), err)
	}
	if port == "0" {
		t.Fatalf("CQLAddr %q is not the bound address", srv.CQLAddr())
	}
	cluster := gocql.NewCluster(host + ":" + port)
	cluster.ProtoVersion = 4
	cluster.Timeout, cluster.ConnectTimeout = 10*time.Second, 10*time.Second
	cluster.NumConns = 1
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for _, stmt := range []string{
		`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE shop.orders (id uuid PRIMARY KEY, note text)`,
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}

	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	members, err := pb.NewMetadataServiceClient(conn).ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || len(members.GetMembers()) != 1 || members.GetMembers()[0].GetCqlAddr() != srv.CQLAddr() {
		t.Fatalf("ListMembers: %v %v, want the member with cql_addr %s", members, err, srv.CQLAddr())
	}
	resp, err := pb.NewMetadataServiceClient(conn).GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "orders", Format: "cql"})
	if err != nil {
		t.Fatalf("GetTable shop.orders after the CQL DDL: %v", err)
	}
	if !strings.Contains(resp.GetCql(), "note text") {
		t.Errorf("shop.orders is\n%s\nwant a column note text", resp.GetCql())
	}
}

// TestCQLListenerTLS: with client TLS on, the CQL listener speaks TLS
// with the client listeners' certificate, and gocql runs DDL over it.
func TestCQLListenerTLS(t *testing.T) {
	ca := testkit.NewCA(t, "clients")
	certFile, keyFile := ca.IssueFiles(t, "srv", "server")
	srv := startCQL(t, func(c *Config) {
		c.CQLAddr = "127.0.0.1:0"
		c.ClientCertFile, c.ClientKeyFile = certFile, keyFile
	})
	conf := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}
	raw, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", srv.CQLAddr(), conf)
	if err != nil {
		t.Fatalf("TLS handshake with the CQL listener: %v", err)
	}
	raw.Close()

	cluster := gocql.NewCluster(srv.CQLAddr())
	cluster.ProtoVersion = 4
	cluster.Timeout, cluster.ConnectTimeout = 10*time.Second, 10*time.Second
	cluster.NumConns = 1
	cluster.SslOpts = &gocql.SslOptions{Config: conf, EnableHostVerification: true}
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if err := session.Query(`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
}

// TestCQLListenerOff: with cql_addr empty there is no CQL listener.
func TestCQLListenerOff(t *testing.T) {
	srv := startCQL(t, func(*Config) {})
	if srv.CQLAddr() != "" || srv.cqlLis != nil || srv.cqlSrv != nil {
		t.Fatalf("CQLAddr %q, listener %v, server %v with cql_addr empty", srv.CQLAddr(), srv.cqlLis, srv.cqlSrv)
	}
}

// TestCQLListenerBindFails: an address the CQL listener cannot bind
// stops the start with an error naming the setting.
func TestCQLListenerBindFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.PeerAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.CQLAddr = taken.Addr().String()
	srv, err := Start(cfg, nil)
	if err == nil {
		srv.Close(context.Background())
		t.Fatal("started with cql_addr on a port in use")
	}
	if !strings.Contains(err.Error(), "cql_addr") {
		t.Fatalf("error %q does not name cql_addr", err)
	}
}

// TestCQLAddrConfig: the key's checks, each error naming it. With
// authentication on, a cql_addr the operator set is refused, whatever its
// value, and the default is not.
func TestCQLAddrConfig(t *testing.T) {
	const auth = "auth_token_file: tokens\ninsecure_peer: true\n"
	for _, tc := range []struct{ yaml, want string }{
		{"cql_addr: 127.0.0.1:9042\n", ""},
		{"cql_addr: ''\n", ""},
		{"cql_addr: nope\n", `cql_addr "nope"`},
		{"cql_addr: 10.1.2.3:9042\n", "cql_addr 10.1.2.3:9042 is not a loopback address"},
		{"cql_addr: 10.1.2.3:9042\ninsecure: true\n", ""},
		{"cql_addr: 127.0.0.1:9042\n" + auth, ""},
		{"cql_addr: ''\n" + auth, ""},
		{auth, ""},
	} {
		c := DefaultConfig()
		err := c.LoadConfigFile(writeFile(t, tc.yaml))
		if err == nil {
			err = c.validate()
		}
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
	c := DefaultConfig()
	if c.CQLAddr != DefaultCQLAddr || DefaultCQLAddr != "127.0.0.1:9042" {
		t.Errorf("cql_addr defaults to %q (DefaultCQLAddr %q), want 127.0.0.1:9042", c.CQLAddr, DefaultCQLAddr)
	}
	c.CQLAddr, c.Insecure = "0.0.0.0:9042", true
	if got := c.insecureExposure(); !strings.Contains(strings.Join(got, " "), "0.0.0.0:9042") {
		t.Errorf("insecure exposure %v does not list the CQL listener", got)
	}
}

// TestCQLIdleTimeoutAndAddress: the CQL listener closes a connection idle
// for idle_timeout, and the member reports the listener in its status,
// where the other members' CQL listeners find it.
func TestCQLIdleTimeoutAndAddress(t *testing.T) {
	srv := startCQL(t, func(c *Config) {
		c.CQLAddr = "127.0.0.1:0"
		c.IdleTimeout = Duration(20 * time.Millisecond)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := srv.member.Cluster().ListMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 1 || st.Members[0].CQLAddr != srv.CQLAddr() {
		t.Fatalf("members %+v, want one with CQL address %s", st.Members, srv.CQLAddr())
	}

	nc, err := net.DialTimeout("tcp", srv.CQLAddr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("read on an idle CQL connection: %v, want it closed", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
