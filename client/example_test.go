package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// A program that creates a keyspace and a table, then reads the table
// back from whichever member answers, once that member has applied the
// change.
func Example() {
	c, err := client.New(client.Config{
		Endpoints: []string{live}, // e.g. "10.0.0.1:7070", "10.0.0.2:7070", "10.0.0.3:7070"
		Timeout:   30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := context.Background()
	resp, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: `
		CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)`})
	if err != nil {
		log.Fatal(err) // a gRPC status error: status.Code(err) is AlreadyExists, InvalidArgument, ...
	}
	for _, r := range resp.Results {
		fmt.Println(r.Kind, r.Keyspace, r.Table, "applied:", r.Applied)
	}

	// MinEpoch: read your own write on any member.
	t, err := c.GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "orders", MinEpoch: resp.Epoch})
	if err != nil {
		log.Fatal(err)
	}
	for _, col := range t.Table.Columns {
		fmt.Println(col.Name, col.Type, col.Kind)
	}

	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP KEYSPACE shop"}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// CREATE KEYSPACE shop  applied: true
	// CREATE TABLE shop orders applied: true
	// id uuid partition_key
	// total decimal regular
}

// A program that learns what became of a change whose call ended with
// the outcome unknown (the member that had it went away, say): it asks by
// the request id, and sends the request again under that id, which
// applies it at most once, to settle it.
func ExampleClient_RequestOutcome() {
	c, err := client.New(client.Config{Endpoints: []string{live}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	// The id is made once and kept with the job's own state, so that a
	// rerun of the job retries the same request.
	id := "deploy-42-" + client.NewRequestID()
	req := &pb.ExecuteRequest{RequestId: id, Statements: `
		CREATE KEYSPACE billing WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`}
	_, err = c.Execute(ctx, req)
	if errors.Is(err, client.ErrOutcomeUnknown) {
		// The change may still apply. Ask what became of it...
		var unknown *client.OutcomeUnknownError
		errors.As(err, &unknown)
		o, err := c.GetRequestOutcome(ctx, &pb.GetRequestOutcomeRequest{RequestId: unknown.RequestID, AfterIndex: unknown.AppliedIndex})
		if err == nil && o.State != "applied" {
			// ...and settle it: a retry under the same id applies once.
			_, err = c.Execute(ctx, req)
		}
		if err != nil {
			log.Fatal(err)
		}
	} else if err != nil {
		log.Fatal(err)
	}

	o, err := c.RequestOutcome(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.State, len(o.Results), o.Results[0].Kind)

	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP KEYSPACE billing"}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// applied 1 CREATE KEYSPACE
}
