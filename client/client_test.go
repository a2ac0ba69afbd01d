package client_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/testkit/serverkit"
)

func newClient(t *testing.T, endpoints ...string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Endpoints: endpoints, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// seq makes names unique within the test process (-count runs the tests
// again on the same member).
var seq atomic.Int64

func unique(name string) string { return fmt.Sprintf("%s_%d", name, seq.Add(1)) }

func createKeyspaceStatement(ks string) string {
	return fmt.Sprintf("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", ks)
}

// createKeyspace creates a keyspace named after name and returns its name.
func createKeyspace(t *testing.T, c *client.Client, name string) (string, *pb.ExecuteResponse) {
	t.Helper()
	ks := unique(name)
	r, err := c.Execute(context.Background(), &pb.ExecuteRequest{Statements: createKeyspaceStatement(ks)})
	if err != nil {
		t.Fatalf("create keyspace %s: %v", ks, err)
	}
	return ks, r
}

// TestFailoverToALiveMember: the endpoints before the live one are an
// address nobody listens on and a member that was stopped.
func TestFailoverToALiveMember(t *testing.T) {
	srv, err := serverkit.Start()
	if err != nil {
		t.Fatal(err)
	}
	stopped := srv.GRPCAddr()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, client.DeadAddr(t), stopped, live)
	name, r := createKeyspace(t, c, "failover")
	ks, err := c.GetKeyspace(context.Background(), &pb.GetKeyspaceRequest{Keyspace: name, MinEpoch: r.Epoch})
	if err != nil || ks.Keyspace.GetName() != name {
		t.Fatalf("GetKeyspace after failover: %v, %v", ks, err)
	}
}

// TestRequestIDAppliesOnce: the same request id twice, from two clients,
// is one change with one epoch.
func TestRequestIDAppliesOnce(t *testing.T) {
	ctx := context.Background()
	name := unique("once")
	req := &pb.ExecuteRequest{Statements: createKeyspaceStatement(name), RequestId: "client-test-" + name}
	first, err := newClient(t, live).Execute(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := newClient(t, client.DeadAddr(t), live).Execute(ctx, req)
	if err != nil {
		t.Fatalf("the retry: %v (want the first answer, not AlreadyExists)", err)
	}
	if again.Epoch != first.Epoch || len(again.Results) != 1 || again.Results[0].Epoch != first.Results[0].Epoch {
		t.Errorf("retry answered epoch %d (%v), the first %d (%v): want the first answer", again.Epoch, again.Results, first.Epoch, first.Results)
	}
	// Without the id the same statement is a new request.
	if _, err := newClient(t, live).Execute(ctx, &pb.ExecuteRequest{Statements: req.Statements}); status.Code(err) != codes.AlreadyExists {
		t.Errorf("the statement again under a new id: %v, want AlreadyExists", err)
	}
}

// TestEveryMethod calls each RPC once on the live member.
func TestEveryMethod(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, client.DeadAddr(t), live)
	ks, created := createKeyspace(t, c, "every")
	r, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE t (id int PRIMARY KEY)", Keyspace: ks})
	if err != nil {
		t.Fatal(err)
	}
	if r.Epoch != created.Epoch+1 {
		t.Errorf("CREATE TABLE at epoch %d, keyspace at %d", r.Epoch, created.Epoch)
	}
	for _, d := range []struct{ ks, table, want string }{
		{ks, "t", "CREATE TABLE " + ks + ".t"},
		{ks, "", "CREATE KEYSPACE " + ks},
		{"", "", "CREATE TABLE " + ks + ".t"},
	} {
		got, err := c.Describe(ctx, d.ks, d.table, &client.DescribeOptions{MinEpoch: r.Epoch, Consistency: client.ConsistencyLinearizable})
		if err != nil || !strings.Contains(got, d.want) {
			t.Errorf("Describe(%q, %q) = %q, %v; want it to hold %q", d.ks, d.table, got, err, d.want)
		}
	}
	if _, err := c.Describe(ctx, ks, "missing", nil); status.Code(err) != codes.NotFound {
		t.Errorf("Describe of a missing table: %v, want NotFound", err)
	}
	if s, err := c.GetSchema(ctx, &pb.GetSchemaRequest{}); err != nil || s.Epoch < r.Epoch {
		t.Errorf("GetSchema: epoch %d, %v", s.GetEpoch(), err)
	}
	if tb, err := c.GetTable(ctx, &pb.GetTableRequest{Keyspace: ks, Table: "t"}); err != nil || tb.Table.GetName() != "t" {
		t.Errorf("GetTable: %v, %v", tb, err)
	}
	if _, err := c.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "2000"}}); err != nil {
		t.Errorf("SetGuardrails: %v", err)
	}
	if g, err := c.GetGuardrails(ctx, &pb.GetGuardrailsRequest{}); err != nil || len(g.Guardrails) == 0 {
		t.Errorf("GetGuardrails: %v, %v", g, err)
	}
	members, err := c.ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil || len(members.Members) != 1 {
		t.Fatalf("ListMembers: %v, %v", members, err)
	}
	if chk, err := c.CheckCluster(ctx, &pb.CheckClusterRequest{}); err != nil || !chk.Agreement {
		t.Errorf("CheckCluster: %v, %v", chk, err)
	}
	if rep, err := c.RepairMember(ctx, &pb.RepairMemberRequest{Id: members.Members[0].Name}); err != nil || rep.Epoch < r.Epoch {
		t.Errorf("RepairMember: %v, %v", rep, err)
	}
	// A learner that never starts: added, then removed.
	added, err := c.AddMember(ctx, &pb.AddMemberRequest{Name: unique("never"), PeerAddr: client.DeadAddr(t)})
	if err != nil {
		t.Fatalf("AddMember: %v", err)
	}
	if _, err := c.RemoveMember(ctx, &pb.RemoveMemberRequest{Id: added.Member.Id}); err != nil {
		t.Errorf("RemoveMember: %v", err)
	}
}

// TestConcurrentExecute creates tables from many goroutines through one
// Client whose first endpoint is dead.
func TestConcurrentExecute(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, client.DeadAddr(t), live)
	ks, _ := createKeyspace(t, c, "busy")
	const goroutines, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE %s.t_%d_%d (id int PRIMARY KEY)", ks, g, i)}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := c.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: ks, Consistency: client.ConsistencyLinearizable})
	if err != nil || len(got.GetKeyspace().GetTables()) != goroutines*each {
		t.Errorf("keyspace %s holds %d tables (%v), want %d", ks, len(got.GetKeyspace().GetTables()), err, goroutines*each)
	}
}
