package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// A program that keeps a copy of a keyspace's objects from the change
// feed, structured as GetSchema returns them: it starts the copy from
// GetKeyspace, follows the keyspace's feed from that epoch, reads each
// event's objects typed (no CQL to parse), and finds the copy exact. The
// copy of a table WITH INDEXES shows as the table's event followed by a
// derived event per index copied.
func ExampleMirror() {
	c, err := client.New(client.Config{Endpoints: []string{live}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	setup, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: `
		CREATE KEYSPACE mirrored WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE mirrored.users (id int PRIMARY KEY, email text);
		CREATE INDEX ON mirrored.users (email)`})
	if err != nil {
		log.Fatal(err)
	}
	start, err := c.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "mirrored", MinEpoch: setup.Epoch})
	if err != nil {
		log.Fatal(err)
	}
	req := &pb.WatchRequest{Keyspace: "mirrored", FromEpoch: proto.Uint64(start.Epoch)}
	m := client.NewMirror(req)
	m.Reset(start.Epoch, []*pb.Keyspace{start.Keyspace})

	copied, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE mirrored.users_copy LIKE mirrored.users WITH INDEXES"})
	if err != nil {
		log.Fatal(err)
	}
	for r := range c.Follow(ctx, req) {
		if r.Err != nil {
			log.Fatal(r.Err)
		}
		for _, ev := range r.Response.Events {
			if t := ev.GetAfterObject().GetTable(); t != nil {
				fmt.Println(ev.Kind, t.Name, "columns:", len(t.Columns), "key:", t.PartitionKey)
			}
			if ix := ev.GetAfterObject().GetIndex(); ix != nil {
				fmt.Println(ev.Kind, ix.Name, "on", ix.Table, "("+ix.Column+")", "caused by:", ev.GetCause().GetStatement())
			}
		}
		if err := m.Apply(r.Response); err != nil {
			log.Fatal(err) // client.ErrMirrorDiverged: start again from GetKeyspace
		}
		if m.Epoch() >= copied.Epoch {
			break
		}
	}

	now, err := c.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "mirrored", MinEpoch: m.Epoch()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("objects:", m.Len(), "differences:", len(m.Diff(client.SchemaObjects([]*pb.Keyspace{now.Keyspace}))))

	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP KEYSPACE mirrored"}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// CREATE TABLE users_copy columns: 2 key: [id]
	// CREATE INDEX users_copy_email_idx on users_copy (email) caused by: CREATE TABLE mirrored.users_copy LIKE mirrored.users WITH INDEXES
	// objects: 5 differences: 0
}
