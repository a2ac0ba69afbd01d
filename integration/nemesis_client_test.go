package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// The clients of the nemesis (TestNemesis) write and read the whole time:
// CREATE TABLE IF NOT EXISTS and DROP TABLE IF EXISTS of a few tables
// (ks.t0 ... ks.t3, whose history porcupine checks with schemaModel),
// CREATE TABLE of a table of their own (u.cW_N: it always changes
// something, so it is in a member's history exactly when it applied), and
// linearizable reads of keyspace ks. Every write has a request id of its
// own, and every answer is classified (writeClass) for the checks of
// nemesis_check_test.go.

// opUnique is an operation kind beside those of schemaModel: CREATE TABLE
// of a table of the client's own. The model never sees it.
const opUnique = opRead + 1

// writeClass is what the answer to a write says of its change.
type writeClass uint8

const (
	// writeAcked: answered with a result; the change is committed.
	writeAcked writeClass = iota
	// writeRefused: the member asked answered with an error that is not
	// outcome-unknown (Unavailable, InvalidArgument, ...): nothing of it
	// applied, and nothing ever will.
	writeRefused
	// writeUnknown: DeadlineExceeded, Unknown or Canceled, or no answer
	// from the member at all (a transport failure, the client's own
	// deadline): the change may apply or not.
	writeUnknown
)

func (c writeClass) String() string {
	return [...]string{"acknowledged", "refused", "unknown"}[c]
}

// outcomeUnknownReason is the ErrorInfo reason of a DeadlineExceeded
// answer whose change may still apply; its metadata "request_id" names
// the request.
const outcomeUnknownReason = "OUTCOME_UNKNOWN"

// classifyAnswer classifies the answer to a write: err is the call's
// error and trailer the trailer metadata the call received. A member's
// own error answer (a trailers-only response) always brings trailer
// metadata (its content-type at least); an error the client made up (the
// connection failed, the client's deadline passed) brings none, and then
// the request may have reached the member, so the outcome is unknown.
func classifyAnswer(err error, trailer metadata.MD) writeClass {
	switch {
	case err == nil:
		return writeAcked
	case len(trailer) == 0:
		return writeUnknown
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unknown, codes.Canceled:
		return writeUnknown
	}
	return writeRefused
}

// errorInfo returns the reason and metadata of the ErrorInfo detail of
// err, if it has one.
func errorInfo(err error) (reason string, md map[string]string) {
	st, ok := status.FromError(err)
	if !ok {
		return "", nil
	}
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei.Reason, ei.Metadata
		}
	}
	return "", nil
}

// opRecord is one operation of a nemesis client and its answer.
type opRecord struct {
	worker    int          // the client that made it
	kind      schemaOpKind // opCreate, opDrop, opRead or opUnique
	table     int          // tN of a create or drop, N of u.cW_N
	requestID string       // writes only
	member    int          // the index of the member asked
	cutOff    bool         // a read sent to a member a partition cut off
	call, ret int64        // schemaHistory.now times

	failed bool // the call returned an error
	// wrong says what was wrong with an answer that no correct member
	// gives (a table no client creates, a result count); empty if none.
	wrong  string
	class  writeClass   // a write's
	out    schemaOutput // a read's answer, an acknowledged write's applied
	epoch  uint64       // an acknowledged write's
	code   codes.Code   // a failed call's
	msg    string       // a failed call's message
	reason string       // a failed call's ErrorInfo reason
	// reasonID is an OUTCOME_UNKNOWN answer's request_id metadata.
	reasonID string
}

// statement is the CQL of a write.
func (r *opRecord) statement() string {
	switch r.kind {
	case opCreate:
		return fmt.Sprintf("CREATE TABLE IF NOT EXISTS ks.t%d (id int PRIMARY KEY)", r.table)
	case opDrop:
		return fmt.Sprintf("DROP TABLE IF EXISTS ks.t%d", r.table)
	case opUnique:
		return fmt.Sprintf("CREATE TABLE u.%s (id int PRIMARY KEY)", r.uniqueTable())
	}
	return "read ks (linearizable)"
}

// uniqueTable is the name of an opUnique's table in keyspace u.
func (r *opRecord) uniqueTable() string { return fmt.Sprintf("c%d_%d", r.worker, r.table) }

// opLog collects the operations of concurrent clients. Times are
// nanoseconds since start on the monotonic clock.
type opLog struct {
	start time.Time

	mu  sync.Mutex // guards ops, known and writes
	ops []*opRecord
	// known counts the operations whose answer means something (reads
	// answered, writes acknowledged or refused), writes the writes among
	// them.
	known, writes int
}

func newOpLog() *opLog { return &opLog{start: time.Now()} }

// now is the time since start in nanoseconds, on the monotonic clock.
func (l *opLog) now() int64 { return int64(time.Since(l.start)) }

// add records a completed operation.
func (l *opLog) add(r *opRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, r)
	switch {
	case r.kind == opRead && !r.failed:
		l.known++
	case r.kind != opRead && r.class != writeUnknown:
		l.known++
		l.writes++
	}
}

// counts is the number of operations completed so far with an answer
// that means something, and of writes with a known outcome among them.
func (l *opLog) counts() (ops, writes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.known, l.writes
}

// snapshot returns the operations recorded so far.
func (l *opLog) snapshot() []*opRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*opRecord(nil), l.ops...)
}

// dialMember opens a connection to a member's gRPC address that tries
// again soon after a failure (the member comes back within seconds after
// a kill), and takes large answers (the final schema).
func dialMember(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
}

// targets is what the nemesis tells its clients about the members.
type targets struct {
	// conns are the connections to each member's gRPC address. A member
	// restarted on other ports (readyErr does when another process took
	// its port meanwhile) gets a new one (follow): its old address may
	// answer for another process by then.
	conns []atomic.Pointer[grpc.ClientConn]
	// down has bit i set while member i is killed, stopped or removed:
	// clients send it nothing new.
	down atomic.Uint64
	// cut is the index of the member a partition cuts off, plus one; 0
	// while none is.
	cut atomic.Int32
}

// pick returns the member for a client's turn-th operation, and whether
// a partition cuts it off: each member in turn, skipping those down,
// except while a partition cuts one off. Then writes go to the other side,
// where they can commit, and half the reads go to the cut-off member,
// which cannot know of them: a correct member fails those reads (unless
// the partition heals first), and one that answers from its own state
// answers stale.
func (tg *targets) pick(rng *rand.Rand, turn int, read bool) (member int, toCut bool) {
	n := len(tg.conns)
	down := tg.down.Load()
	m := turn % n
	for i := 0; i < n && down&(1<<m) != 0; i++ {
		m = (m + 1) % n
	}
	cut := int(tg.cut.Load()) - 1
	switch {
	case cut < 0:
	case read && rng.IntN(2) == 0:
		m = cut
	case m == cut:
		m = (cut + 1 + rng.IntN(n-1)) % n
	}
	return m, m == cut
}

// newTargets dials every server of c.
func newTargets(c *cluster) (*targets, error) {
	tg := &targets{conns: make([]atomic.Pointer[grpc.ClientConn], len(c.servers))}
	for i, s := range c.servers {
		if err := tg.follow(i, s.grpcAddr); err != nil {
			tg.close()
			return nil, err
		}
	}
	return tg, nil
}

// member returns a client of member i at its current address.
func (tg *targets) member(i int) pb.MetadataServiceClient {
	return pb.NewMetadataServiceClient(tg.conns[i].Load())
}

// follow makes member i's connection one to addr, unless it is already;
// calls in flight on the connection it replaces fail (Canceled, outcome
// unknown).
func (tg *targets) follow(i int, addr string) error {
	if old := tg.conns[i].Load(); old != nil && old.Target() == addr {
		return nil
	}
	conn, err := dialMember(addr)
	if err != nil {
		return err
	}
	if old := tg.conns[i].Swap(conn); old != nil {
		old.Close()
	}
	return nil
}

// close closes every connection.
func (tg *targets) close() {
	for i := range tg.conns {
		if conn := tg.conns[i].Load(); conn != nil {
			conn.Close()
		}
	}
}

// nemesisClient is one client goroutine of the nemesis.
type nemesisClient struct {
	worker int
	log    *opLog
	tg     *targets
	rng    *rand.Rand
	prefix string // of request ids
}

// nemesisOpTimeout bounds each operation of a nemesis client.
const nemesisOpTimeout = 3 * time.Second

// run makes operations until stop is set, ctx ends or deadline passes.
// The calls wait for a connection to be ready, so an operation sent to a
// member that went down waits for it to come back (or the timeout).
func (c *nemesisClient) run(ctx context.Context, stop *atomic.Bool, deadline time.Time) {
	for i := 0; !stop.Load() && ctx.Err() == nil && time.Now().Before(deadline); i++ {
		r := &opRecord{worker: c.worker, kind: schemaOpKind(c.rng.IntN(4)), table: c.rng.IntN(schemaTables)}
		if r.kind == opUnique {
			r.table = i
		}
		if r.kind != opRead {
			r.requestID = fmt.Sprintf("%s-%d", c.prefix, i)
		}
		// The call time is taken before pick, so that a read picked for a
		// cut-off member is called before the partition heals.
		r.call = c.log.now()
		var toCut bool
		r.member, toCut = c.tg.pick(c.rng, i, r.kind == opRead)
		r.cutOff = toCut && r.kind == opRead
		octx, cancel := context.WithTimeout(ctx, nemesisOpTimeout)
		c.do(octx, c.tg.member(r.member), r)
		cancel()
		r.ret = c.log.now()
		c.log.add(r)
	}
}

// do makes operation r on member and records its answer in r.
func (c *nemesisClient) do(ctx context.Context, member pb.MetadataServiceClient, r *opRecord) {
	var trailer metadata.MD
	var err error
	if r.kind == opRead {
		var resp *pb.GetKeyspaceResponse
		resp, err = member.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks", Consistency: "linearizable"}, grpc.WaitForReady(true))
		if err == nil {
			if r.out, err = readTables(resp); err != nil {
				r.wrong = err.Error()
			}
		}
	} else {
		var resp *pb.ExecuteResponse
		resp, err = member.Execute(ctx, &pb.ExecuteRequest{Statements: r.statement(), RequestId: r.requestID},
			grpc.WaitForReady(true), grpc.Trailer(&trailer))
		r.class = classifyAnswer(err, trailer)
		if err == nil {
			if len(resp.Results) != 1 {
				err = fmt.Errorf("%d results, want 1: %v", len(resp.Results), resp)
				r.class, r.wrong = writeUnknown, err.Error()
			} else {
				r.out, r.epoch = schemaOutput{applied: resp.Results[0].Applied}, resp.Epoch
			}
		}
	}
	if err != nil {
		r.failed, r.code, r.msg = true, status.Code(err), err.Error()
		var md map[string]string
		r.reason, md = errorInfo(err)
		r.reasonID = md["request_id"]
	}
}

// errUnexpectedTable is the error of a read that found a table the
// clients never create in keyspace ks.
var errUnexpectedTable = errors.New("unexpected table in keyspace ks")

// readTables turns a read's answer into the tables it saw.
func readTables(r *pb.GetKeyspaceResponse) (schemaOutput, error) {
	var out schemaOutput
	for _, tb := range r.Keyspace.GetTables() {
		n := tableIndex(tb.Name)
		if n < 0 {
			return out, fmt.Errorf("read at epoch %d: ks.%s: %w", r.Epoch, tb.Name, errUnexpectedTable)
		}
		out.tables |= 1 << n
	}
	return out, nil
}
