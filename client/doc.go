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
// # Consuming the change feed
//
// Watch and Follow stream the schema changes as they are applied, going
// on from the last epoch seen on another member when one goes away, so
// that each epoch arrives once, in order. A program that keeps something
// derived from the feed (a copy of the schema, a catalog, a cache) is
// built on Follow:
//
//   - Follow: Follow keeps trying the members until ctx ends, however
//     long every one of them is down, with a capped, jittered backoff.
//     Pass a WatchRetry with an OnFailover hook to log each failover, or
//     with GiveUpAfter to bound the wait.
//   - Resume: store the epoch of each message handled (WatchResponse.Epoch,
//     the last epoch it covers) together with what was derived from it,
//     and after a restart of the program follow again with FromEpoch set
//     to it: the feed goes on with exactly the changes after it.
//   - Read every message by its type, WatchTypeOf(m): WatchEvents carries
//     the changes of one or more consecutive epochs, WatchProgress says
//     nothing (more) changed up to its epoch, and WatchResync says the
//     member no longer keeps the changes asked for: Cql is the whole
//     (filtered) schema at its epoch, which replaces whatever was derived
//     before, and the changes after it follow. Stop on a type that is not
//     Known rather than skip it.
//   - Errors that end it: when ctx ends the channel closes with no error;
//     otherwise the last value carries an error that retrying on another
//     member cannot fix (PermissionDenied, Unauthenticated,
//     InvalidArgument, FailedPrecondition, which includes a history that
//     changed under the watch, ResourceExhausted for too many streams of
//     the caller): the program must handle it (fix its credentials, or
//     resync from GetSchema) before it follows again.
//
// For example:
//
//	from := handled // stored with the program's state; 0: from the first epoch
//	for r := range c.Follow(ctx, &metalogpb.WatchRequest{FromEpoch: &from, Keyspace: "shop"}) {
//		if r.Err != nil {
//			return r.Err
//		}
//		m := r.Response
//		switch client.WatchTypeOf(m) {
//		case client.WatchEvents:
//			for _, ev := range m.Events {
//				fmt.Println(ev.Epoch, ev.Kind, ev.Keyspace, ev.Table)
//			}
//		case client.WatchResync:
//			// start over from m.Cql, the schema at m.Epoch
//		case client.WatchProgress:
//		default:
//			return fmt.Errorf("watch message of unknown type %q", m.Type)
//		}
//		handled = m.Epoch // stored with what was derived, in one transaction
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
// Every response carries the cluster's history id (HistoryId). A restore
// from a backup or a forced new cluster starts a new history, whose epoch
// numbers may name other changes; Watch and Follow name the history id of
// the request, or of the first message, when they resume, and end with an
// error matching ErrHistoryChanged when the cluster's is another: read the
// schema again and follow from its epoch and history id. A consumer that
// stores its epoch stores the history id with it and names it in
// WatchRequest.HistoryId.
//
// # Outcomes of changes
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
// # Backups
//
// SaveBackupFile saves a backup of the cluster into a file the safe way
// (what `metalog snapshot save` runs), and SaveBackup streams one into any
// io.Writer. Verifying and restoring a backup are offline and need the
// snapshot format, which this package does not know: they are
// member.VerifyBackupFile and member.RestoreBackupFile, and
// member.CheckBackup is the verify function to give SaveBackupFile.
//
// # Requests and errors
//
// Requests and responses are the generated messages of package
// github.com/metalog/metalog/api/metalogpb, and errors are the gRPC status
// errors the server sends (test them with status.Code): see the README's
// "Requests and errors" for the codes. An answer with an ErrorInfo reason
// (a guardrail, an if_epoch conflict, another history, ...) is a
// *ReasonError, which keeps its code and matches the sentinel of its
// reason with errors.Is: ErrGuardrail, ErrIfEpochConflict,
// ErrHistoryChanged and the others of errors.go. A Client implements
// metalogpb.MetadataServiceClient, so code written against the generated
// client gets failover by taking a Client instead.
//
// The package owns the client side only: it imports no server package.
package client
