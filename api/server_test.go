package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// startServer runs a one-node server on loopback ports chosen by the kernel.
func startServer(tb testing.TB, window time.Duration) (*Server, pb.MetadataServiceClient) {
	tb.Helper()
	return startServerWith(tb, func(c *Config) { c.SchemaFlushCoalescingWindow = Duration(window) })
}

// startServerWith is startServer with the defaults changed by mod.
func startServerWith(tb testing.TB, mod func(*Config)) (*Server, pb.MetadataServiceClient) {
	tb.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = tb.TempDir()
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.PeerAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	mod(&cfg)
	srv, err := Start(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			tb.Error(err)
		}
	})
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	c := pb.NewMetadataServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if srv.member.Readiness().Ready {
			break
		}
		select {
		case <-ctx.Done():
			tb.Fatal("server not ready")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		tb.Fatal(err)
	}
	return srv, c
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
