package serverkit

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestNewServesAndApplies: the server answers on its gRPC port, applies
// a change once it has a leader, and took the options.
func TestNewServesAndApplies(t *testing.T) {
	srv := New(t, func(c *server.Config) { c.Name = "solo" })
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewMetadataServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no change applied: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := c.ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || len(resp.Members) != 1 || resp.Members[0].Name != "solo" {
		t.Errorf("members %v, %v; want the one named solo", resp, err)
	}
}

// TestWithCQL: WithCQL binds the CQL listener on a loopback port that
// accepts connections; without it there is none.
func TestWithCQL(t *testing.T) {
	if addr := New(t).CQLAddr(); addr != "" {
		t.Fatalf("CQL listener at %q without WithCQL", addr)
	}
	addr := New(t, WithCQL()).CQLAddr()
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("CQLAddr %q (%v), want a bound loopback port", addr, err)
	}
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
