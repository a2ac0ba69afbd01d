package client_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/testkit/serverkit"
)

// TestReadEndpointOnRealMembers: with the test's member as the endpoint
// and another one-member cluster as the read endpoint, a keyspace
// created through the Client is on the endpoint's cluster, and a
// linearizable read through the Client answers from the read endpoint's
// cluster, which does not have it; once the read endpoint is stopped the
// read falls back to the endpoint and finds it.
func TestReadEndpointOnRealMembers(t *testing.T) {
	reader, err := serverkit.Start()
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			reader.Stop()
		}
	})
	c, err := client.New(client.Config{Endpoints: []string{live}, ReadEndpoints: []string{reader.GRPCAddr()}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	name, r := createKeyspace(t, c, "readep")
	onLive := newClient(t, live)
	if _, err := onLive.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: name, MinEpoch: r.Epoch}); err != nil {
		t.Fatalf("the keyspace created through the Client is not on the endpoint: %v", err)
	}
	linearizable := &pb.GetKeyspaceRequest{Keyspace: name, Consistency: client.ConsistencyLinearizable}
	if _, err := c.GetKeyspace(ctx, linearizable); status.Code(err) != codes.NotFound {
		t.Fatalf("GetKeyspace through the Client: %v, want NotFound from the read endpoint's cluster", err)
	}
	stopped = true
	if err := reader.Stop(); err != nil {
		t.Fatal(err)
	}
	ks, err := c.GetKeyspace(ctx, linearizable)
	if err != nil || ks.Keyspace.GetName() != name {
		t.Fatalf("GetKeyspace with the read endpoint down: %v, %v; want the keyspace from the endpoint", ks, err)
	}
}
