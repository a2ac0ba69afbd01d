// Package client is the Go client of metalog: it calls every method of the
// metalog.v1.MetadataService gRPC service on a cluster, moving on to the
// next member when one is unavailable, and retries schema changes under a
// request id so that none applies twice.
//
//	c, err := client.New(client.Config{
//		Endpoints: []string{"10.0.0.1:7070", "10.0.0.2:7070", "10.0.0.3:7070"},
//		TLS:       &tls.Config{RootCAs: pool},
//		Token:     os.Getenv("METALOG_TOKEN"),
//	})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	resp, err := c.Execute(ctx, &metalogpb.ExecuteRequest{
//		Statements: "CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)",
//	})
//	if status.Code(err) == codes.AlreadyExists {
//		...
//	}
//	cql, err := c.Describe(ctx, "shop", "", &client.DescribeOptions{MinEpoch: resp.GetEpoch()})
//
// Watch and Follow stream the schema changes as they are applied, going
// on from the last epoch seen on another member when one goes away, so
// that each epoch arrives once, in order:
//
//	for r := range c.Follow(ctx, &metalogpb.WatchRequest{Keyspace: "shop"}) {
//		if r.Err != nil {
//			return r.Err
//		}
//		for _, ev := range r.Response.Events {
//			fmt.Println(ev.Epoch, ev.Kind, ev.Keyspace, ev.Table)
//		}
//	}
//
// A message carries the events of one or more epochs. Every object a
// change creates, alters or drops has its event, with the object before
// and after it in the messages GetSchema returns (Event.BeforeObject,
// Event.AfterObject: a table's columns, key and properties, typed), so a
// consumer needs no CQL parser; a statement that changes more than the
// object it names (DROP KEYSPACE, CREATE TABLE ... LIKE ... WITH INDEXES)
// is followed by a derived event per further object, with Event.Cause
// naming the statement. Mirror keeps a copy of the objects from the
// events, checking each event's before object against it:
//
//	m := client.NewMirror(req)
//	for r := range c.Follow(ctx, req) {
//		if r.Err != nil {
//			return r.Err
//		}
//		if err := m.Apply(r.Response); err != nil { // ErrMirrorDiverged
//			return err
//		}
//		users := m.Get(client.ObjectKey{Kind: client.ObjectTable, Keyspace: "shop", Name: "users"}).GetTable()
//		...
//	}
//
// A change whose call fails may still apply: a member proposed it and
// could not wait for it, or the connection failed after the request was
// sent. The Client tries the other members under the same request id, and
// when none settles it in time the error matches ErrOutcomeUnknown (an
// *OutcomeUnknownError with the request id, gRPC code DeadlineExceeded):
//
//	_, err := c.Execute(ctx, req)
//	var unknown *client.OutcomeUnknownError
//	if errors.As(err, &unknown) {
//		o, err := c.RequestOutcome(ctx, unknown.RequestID) // "applied", "not_applied", ...
//		...
//	}
//
// Requests and responses are the generated messages of package
// github.com/metalog/metalog/api/metalogpb, and errors are the gRPC status
// errors the server sends (test them with status.Code): see the README's
// "Requests and errors" for the codes. A Client implements
// metalogpb.MetadataServiceClient, so code written against the generated
// client gets failover by taking a Client instead.
//
// The package owns the client side only: it imports no server package.
package client
