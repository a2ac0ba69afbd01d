// Package client is metalog's Go client: it calls the
// metalog.v1.MetadataService of a cluster through any of its members, moving
// on when one is unavailable, and retries changes under a request id so that
// none applies twice.
//
// It owns the client side only and imports no server package. Requests and
// responses are the generated messages of package api/metalogpb, and a Client
// implements metalogpb.MetadataServiceClient, so code written against the
// generated client gets failover by taking a Client instead. Verifying and
// restoring a backup need its format (a raft snapshot image of the state),
// which this package does not know: see member.CheckBackup and
// member.RestoreBackupFile.
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
//	// handle err; then read your own write on any member:
//	cql, err := c.Describe(ctx, "shop", "orders", &client.DescribeOptions{MinEpoch: resp.GetEpoch()})
//
// Errors are the members' gRPC status errors (test them with status.Code; the
// README's "Requests and errors" lists them). One with an ErrorInfo reason is
// a *ReasonError, which matches its reason's sentinel (ErrGuardrail,
// ErrHistoryChanged, ...) with errors.Is. A change whose call fails may still
// apply: when no member settles it in time the error is an
// *OutcomeUnknownError naming the request id; ask RequestOutcome, or send the
// request again under that id.
//
// Config.ReadEndpoints sends the reads and watches to members of their own
// (observers, which serve reads without voting), falling back to Endpoints
// when none of them answers; changes always go to Endpoints (see Client).
//
// # Consuming the change feed
//
// Watch and Follow go on from the last epoch seen on another member when one
// goes away, so each epoch arrives once, in order. A program that keeps
// something derived from the feed (a copy of the schema, a catalog; see
// Mirror) consumes it with Follow, as the example of Client.Follow does, and:
//   - stores each handled message's Epoch and HistoryId in one transaction
//     with what it derived, and after a restart follows again with
//     WatchRequest.FromEpoch and HistoryId set to them;
//   - reads each message by WatchTypeOf: a WatchResync replaces everything
//     derived before, and a message of a type that is not Known is a reason
//     to stop, not one to skip;
//   - handles the error that ends the channel, which another member would
//     give too: a refusal (credentials, the request, too many streams) or
//     ErrHistoryChanged, after which it reads the schema again (GetSchema)
//     and follows from its epoch and history id. When ctx ends the channel
//     closes with no error.
package client
