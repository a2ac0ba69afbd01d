package api

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/metalog/metalog/access"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
)

// testServer is one member served by the handlers on loopback ports the
// kernel picks, assembled as package server does it, without its
// configuration file, security material and connection caps.
type testServer struct {
	member           *member.Member
	grpcLis, httpLis net.Listener
}

// GRPCAddr is the address of the gRPC listener.
func (s *testServer) GRPCAddr() string { return s.grpcLis.Addr().String() }

// HTTPAddr is the address of the HTTP listener.
func (s *testServer) HTTPAddr() string { return s.httpLis.Addr().String() }

// testSettings are what a test may change of a testServer: its member's
// config and the handlers' options.
type testSettings struct {
	member   member.Config
	handlers Options
}

// testOptions are the handlers' options with the configuration file's
// defaults (package server's DefaultConfig).
func testOptions() Options {
	return Options{
		MaxRequestBytes:                    1572864,
		MaxConcurrentRequestsPerConnection: 64,
		MaxWatchStreams:                    10000,
		MaxWatchStreamsPerIdentity:         2500,
		RequestReadTimeout:                 10 * time.Second,
		IdleTimeout:                        time.Minute,
	}
}

// testMemberConfig is a one-member cluster's config in dir with the
// configuration file's defaults, its client addresses those given.
func testMemberConfig(dir, grpcAddr, httpAddr string) member.Config {
	return member.Config{
		DataDir: dir, Name: "n1", PeerAddr: "127.0.0.1:0", GRPCAddr: grpcAddr, HTTPAddr: httpAddr,
		RequestTimeout:             10 * time.Second,
		FlushWindow:                time.Second,
		MaxMutationSize:            16 << 20,
		SnapshotEntries:            10000,
		SnapshotCatchUpEntries:     5000,
		SnapshotChunkSize:          2 << 20,
		SnapshotMaxConcurrentSends: 2,
		Guardrails:                 guardrails.Defaults(),
		MaxStatementsPerRequest:    10000,
		HistoryRetention:           1_000_000,
		WatchProgressInterval:      5 * time.Second,
		MinFreeSpaceBytes:          64 << 20,
		StoreScrubInterval:         time.Hour,
	}
}

// launch starts a testServer with the settings mod changes; it is closed
// (drained as package server closes) when the test ends.
func launch(tb testing.TB, mod func(*testSettings)) *testServer {
	tb.Helper()
	s := &testServer{}
	var err error
	if s.grpcLis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		tb.Fatal(err)
	}
	if s.httpLis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		s.grpcLis.Close()
		tb.Fatal(err)
	}
	st := testSettings{member: testMemberConfig(tb.TempDir(), s.GRPCAddr(), s.HTTPAddr()), handlers: testOptions()}
	mod(&st)
	reg := prometheus.NewRegistry()
	st.member.Registerer, st.handlers.Registry = reg, reg
	if s.member, err = member.Start(st.member); err != nil {
		s.grpcLis.Close()
		s.httpLis.Close()
		tb.Fatal(err)
	}
	h, err := New(MemberBackend(s.member), st.handlers)
	if err != nil {
		tb.Fatal(err)
	}
	grpcSrv := h.NewGRPCServer()
	gw, err := h.NewGateway()
	if err != nil {
		tb.Fatal(err)
	}
	go grpcSrv.Serve(s.grpcLis)
	go gw.Serve()
	go gw.HTTP.Serve(s.httpLis)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.member.Reads().EndFeeds()
		if err := gw.HTTP.Shutdown(ctx); err != nil {
			tb.Error(err)
		}
		gw.Stop()
		grpcSrv.GracefulStop()
		gw.Close()
		if err := s.member.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// startServer runs a one-node server on loopback ports chosen by the kernel.
func startServer(tb testing.TB, window time.Duration) (*testServer, pb.MetadataServiceClient) {
	tb.Helper()
	return startServerWith(tb, func(s *testSettings) { s.member.FlushWindow = window })
}

// startServerWith is startServer with the defaults changed by mod; it
// waits until the server is ready and creates the keyspace ks.
func startServerWith(tb testing.TB, mod func(*testSettings)) (*testServer, pb.MetadataServiceClient) {
	tb.Helper()
	srv, c := dialReady(tb, launch(tb, mod))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		tb.Fatal(err)
	}
	return srv, c
}

// dialReady returns a client of srv (plaintext) once srv is ready; the
// client is closed when the test ends.
func dialReady(tb testing.TB, srv *testServer) (*testServer, pb.MetadataServiceClient) {
	tb.Helper()
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !srv.member.Readiness().Ready {
		select {
		case <-ctx.Done():
			tb.Fatal("server not ready")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return srv, pb.NewMetadataServiceClient(conn)
}

// testTokens are bearer tokens given as the lines of a token file
// ("name sha256hex role,role"), by hash; package server reads the real
// file.
type testTokens map[string]tokenGrants

// tokenGrants are one token's name and grants.
type tokenGrants struct {
	name   string
	grants access.Grants
}

// newTestTokens parses lines of a token file.
func newTestTokens(tb testing.TB, lines string) testTokens {
	tb.Helper()
	out := testTokens{}
	for _, line := range strings.Split(strings.TrimSpace(lines), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			tb.Fatalf("token line %q: want name sha256hex role,role", line)
		}
		grants, err := access.ParseGrants(strings.Split(f[2], ","))
		if err != nil {
			tb.Fatal(err)
		}
		out[f[1]] = tokenGrants{name: f[0], grants: grants}
	}
	return out
}

// Lookup implements Tokens.
func (tt testTokens) Lookup(token string) (string, access.Grants, bool) {
	e, ok := tt[HashToken(token)]
	return e.name, e.grants, ok
}

// BenchmarkExecuteCreateTable measures one CREATE TABLE through gRPC, raft
// (fsync on) and apply, with the schema store flush synchronous (window 0)
// and coalesced (1s).
func BenchmarkExecuteCreateTable(b *testing.B) {
	for _, window := range []time.Duration{0, time.Second} {
		b.Run(fmt.Sprintf("window=%v", window), func(b *testing.B) {
			_, c := startServer(b, window)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				_, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)", i)})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
