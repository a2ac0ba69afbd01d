package client_test

import (
	"context"
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
