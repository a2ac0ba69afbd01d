package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/member"
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

// A consumer of the change feed that keeps what it learns (here the
// tables of a keyspace) together with the epoch it has handled, and after
// a restart of its own resumes from that epoch: it gets exactly the
// changes it had not handled, once each, in order, whichever members are
// up meanwhile. Follow goes on across members until its context ends;
// the OnFailover hook logs each failover.
func ExampleClient_Follow() {
	c, err := client.New(client.Config{Endpoints: []string{live}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The consumer's own state, which a real one keeps in its database,
	// updated with the epoch in one transaction.
	tables := map[string]bool{}
	s, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		log.Fatal(err)
	}
	handled := s.Epoch // start from now: the keyspace does not exist yet

	// consume follows the keyspace from the epoch handled until the table
	// named until appears, and returns the epoch it handled last.
	consume := func(run int, from uint64, until string) uint64 {
		ctx, stop := context.WithCancel(ctx)
		defer stop() // ends Follow's goroutine
		retry := client.WatchRetry{OnFailover: func(f client.WatchFailover) {
			slog.Warn("watch failover", "endpoint", f.Endpoint, "err", f.Err, "next", f.Next, "after_epoch", f.Epoch)
		}}
		for r := range c.Follow(ctx, &pb.WatchRequest{FromEpoch: &from, Keyspace: "inventory"}, retry) {
			if r.Err != nil {
				log.Fatal(r.Err) // PermissionDenied, a history that changed, ...: retrying cannot fix it
			}
			m := r.Response
			switch client.WatchTypeOf(m) {
			case client.WatchEvents: // one or more epochs, in order
				for _, e := range m.Events {
					name := e.Keyspace
					if e.Table != "" {
						name += "." + e.Table
					}
					fmt.Println("run", run, "epoch", e.Epoch-s.Epoch, e.Kind, name)
					switch e.Kind {
					case "CREATE TABLE":
						tables[e.Table] = true
					case "DROP TABLE":
						delete(tables, e.Table)
					}
				}
			case client.WatchResync: // the member no longer keeps what we missed
				clear(tables) // rebuild from m.Cql, the schema at m.Epoch
			case client.WatchProgress: // nothing new up to m.Epoch
			default:
				log.Fatalf("a watch message of type %q this client does not know", m.Type)
			}
			from = m.Epoch // handled: store it with the state
			if tables[until] {
				return from
			}
		}
		log.Fatal(ctx.Err())
		return 0
	}

	exec := func(cql string) {
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: cql}); err != nil {
			log.Fatal(err)
		}
	}
	exec(`CREATE KEYSPACE inventory WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE inventory.items (sku text PRIMARY KEY, count int)`)
	handled = consume(1, handled, "items")

	// The consumer is down while the schema changes on.
	exec("CREATE TABLE inventory.orders (id uuid PRIMARY KEY, sku text)")
	exec("CREATE TABLE inventory.shipments (id uuid PRIMARY KEY, order_id uuid)")

	// Restarted, it resumes from the epoch it stored.
	handled = consume(2, handled, "shipments")
	fmt.Println("handled up to epoch", handled-s.Epoch, "tables", len(tables))

	exec("DROP KEYSPACE inventory")
	// Output:
	// run 1 epoch 1 CREATE KEYSPACE inventory
	// run 1 epoch 2 CREATE TABLE inventory.items
	// run 2 epoch 3 CREATE TABLE inventory.orders
	// run 2 epoch 4 CREATE TABLE inventory.shipments
	// handled up to epoch 4 tables 3
}

// A program that reads the history of a keyspace a page at a time,
// following NextEpoch until the range is done.
func ExampleClient_History() {
	c, err := client.New(client.Config{Endpoints: []string{live}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	s, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: `
		CREATE KEYSPACE ledger WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ledger.accounts (id uuid PRIMARY KEY);
		CREATE TABLE ledger.postings (id timeuuid PRIMARY KEY, account uuid, amount decimal);
		ALTER TABLE ledger.postings ADD memo text`}); err != nil {
		log.Fatal(err)
	}

	// The changes after the epoch read above, two events a page.
	req := &pb.HistoryRequest{FromEpoch: &s.Epoch, Keyspace: "ledger", Limit: 2}
	for page := 1; ; page++ {
		resp, err := c.History(ctx, req)
		if err != nil {
			log.Fatal(err) // OutOfRange: the member no longer keeps that history
		}
		for _, e := range resp.Events {
			fmt.Println("page", page, e.Kind, strings.TrimSuffix(e.Keyspace+"."+e.Table, "."))
		}
		if resp.NextEpoch == nil {
			break
		}
		req.FromEpoch = resp.NextEpoch
	}

	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP KEYSPACE ledger"}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// page 1 CREATE KEYSPACE ledger
	// page 1 CREATE TABLE ledger.accounts
	// page 2 CREATE TABLE ledger.postings
	// page 2 ALTER TABLE ledger.postings
}

// A deploy job that plans the DDL from a desired schema, shows it for
// review, and applies exactly those statements atomically, only if the
// schema has not moved since the plan (if_epoch); planned again, nothing
// is left to do.
func ExampleClient_Plan() {
	c, err := client.New(client.Config{Endpoints: []string{live}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	desired := `
		CREATE KEYSPACE catalog WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE catalog.products (id uuid PRIMARY KEY, name text, price decimal);`

	plan, err := c.Plan(ctx, &pb.PlanRequest{Desired: desired})
	if err != nil {
		log.Fatal(err) // InvalidArgument: the desired schema does not parse; FailedPrecondition: refused
	}
	for _, s := range plan.Statements {
		fmt.Println(s)
	}
	fmt.Println("warnings:", len(plan.Warnings), "destructive:", plan.Destructive)

	_, err = c.Execute(ctx, &pb.ExecuteRequest{Statements: strings.Join(plan.Statements, ";\n"), Atomic: true, IfEpoch: &plan.Epoch})
	if status.Code(err) == codes.FailedPrecondition {
		log.Fatal("the schema changed since the plan: plan again and review") // nothing applied
	} else if err != nil {
		log.Fatal(err)
	}

	again, err := c.Plan(ctx, &pb.PlanRequest{Desired: desired})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pending:", len(again.Statements))

	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP KEYSPACE catalog"}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// CREATE KEYSPACE catalog WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'} AND durable_writes = true
	// CREATE TABLE catalog.products (
	//     id uuid PRIMARY KEY,
	//     name text,
	//     price decimal
	// )
	// warnings: 0 destructive: false
	// pending: 0
}

// A backup job: it saves a backup of the cluster into a file the safe
// way (checked with member.CheckBackup before it replaces the file),
// verifies the file offline as a restore drill would, and restores it
// into the data dir of the first member of a new cluster. Programs that
// keep backups elsewhere stream them with SaveBackup into any io.Writer.
func ExampleSaveBackupFile() {
	c, err := client.New(client.Config{Endpoints: []string{live}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "metalog-backup-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	path := filepath.Join(dir, "backup.snap")
	info, err := client.SaveBackupFile(ctx, c, path, member.CheckBackup)
	if err != nil {
		log.Fatal(err) // errors.Is(err, client.ErrBadBackup): save again
	}

	st, err := member.VerifyBackupFile(path)
	if err != nil {
		log.Fatal(err) // errors.Is(err, member.ErrBadBackup): damaged
	}
	fmt.Println("verified:", st.ChecksumOK, "at the epoch saved:", st.Epoch == info.Epoch)

	// Restore once per founding member of the new cluster, then start
	// each (metalog serve) with the same name, data dir and members.
	founders := []member.InitialMember{{Name: "n1", PeerAddr: "127.0.0.1:7171"}}
	restored, err := member.RestoreBackupFile(path, filepath.Join(dir, "n1"), "n1", founders)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("restored the same schema:", restored.Digest == st.Digest)

	// Into a writer: an upload, a pipe, a buffer.
	var buf bytes.Buffer
	if info, err = client.SaveBackup(ctx, c, &buf); err != nil {
		log.Fatal(err)
	}
	if _, err := member.VerifyBackup(buf.Bytes()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("streamed:", uint64(buf.Len()) == info.Size)
	// Output:
	// verified: true at the epoch saved: true
	// restored the same schema: true
	// streamed: true
}
