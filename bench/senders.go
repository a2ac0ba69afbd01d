package bench

import (
	"context"
	"fmt"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/gocql/gocql"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// ddlSender sends the timed phase's statements over one protocol. One
// sender may serve several of the benchmark's clients at once.
type ddlSender interface {
	// execute sends statement, table i's, and waits for its
	// acknowledgement. The answer is the gRPC response, nil over CQL.
	execute(ctx context.Context, i int, statement string) (*pb.ExecuteResponse, error)
}

// grpcSender sends through metalog's gRPC API, under the request id
// bench-i.
type grpcSender struct{ c *client.Client }

func (g grpcSender) execute(ctx context.Context, i int, statement string) (*pb.ExecuteResponse, error) {
	return g.c.Execute(ctx, &pb.ExecuteRequest{Statements: statement, RequestId: fmt.Sprintf("bench-%d", i)})
}

// cqlSender sends a QUERY of the CQL native protocol through a gocql
// session; the native protocol has no request id.
type cqlSender struct{ s *gocql.Session }

func (q cqlSender) execute(ctx context.Context, _ int, statement string) (*pb.ExecuteResponse, error) {
	return nil, q.s.Query(statement).WithContext(ctx).Exec()
}

// senders returns the timed phase's sender of each client: over gRPC, its
// client of prepare; over CQL, the session of the CQL address of the
// member that client's gRPC client is on (cqlAddrs[i] is that of
// prepare's endpoint i), one session per member, shared like the gRPC
// connection. closeAll closes the sessions; it may be called more than
// once.
func (o *TablesOptions) senders(ctx context.Context, clients []*client.Client, cqlAddrs []string) (senders []ddlSender, closeAll func(), err error) {
	senders = make([]ddlSender, len(clients))
	if o.Protocol != ProtocolCQL {
		for i, c := range clients {
			senders[i] = grpcSender{c}
		}
		return senders, func() {}, nil
	}
	sessions := make([]*gocql.Session, 0, len(cqlAddrs))
	closeAll = sync.OnceFunc(func() {
		for _, s := range sessions {
			s.Close()
		}
	})
	for _, addr := range cqlAddrs {
		s, err := cqlSession(ctx, addr, !o.NoSchemaAgreement)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sessions = append(sessions, s)
	}
	for i := range senders {
		senders[i] = cqlSender{sessions[i%len(sessions)]}
	}
	return senders, closeAll, nil
}

// cqlSession connects a gocql session to the CQL listener at addr alone
// and warms it: the driver's defaults, but for the protocol version (v4,
// not negotiated), one connection for queries (the gRPC client has one
// per member), the gRPC path's bound on a request, no write coalescing
// (gocql holds every frame for 200 µs by default to batch writes; the
// gRPC client sends at once), and no schema events: the gRPC clients
// watch nothing, and under a stream of DDL gocql's debouncer, whose
// timer restarts with every event, never flushes: it buffers 1000
// events, then drops and logs every further one (the change feed has a
// benchmark of its own, bench watch). Without agreement, the driver does
// not wait for schema agreement after a DDL (see noAgreementLogger).
func cqlSession(ctx context.Context, addr string, agreement bool) (*gocql.Session, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bench: CQL address %q: %w", addr, err)
	}
	cl := gocql.NewCluster(host)
	if cl.Port, err = strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("bench: CQL address %q: %w", addr, err)
	}
	cl.ProtoVersion = 4
	cl.NumConns = 1
	cl.Timeout, cl.ConnectTimeout = setupTimeout, setupTimeout
	cl.WriteCoalesceWaitTime = 0
	cl.Events.DisableSchemaEvents = true
	if !agreement {
		cl.MaxWaitSchemaAgreement, cl.Logger = 0, noAgreementLogger{}
	}
	s, err := cl.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("bench: CQL session on %s: %w", addr, err)
	}
	// Warm the session as the gRPC clients are: gocql prepares the
	// SELECTs of its schema agreement on first use, which should not be
	// counted in the first DDL.
	for _, q := range []string{"SELECT * FROM system.peers", "SELECT schema_version FROM system.local WHERE key='local'"} {
		if err := s.Query(q).WithContext(ctx).Exec(); err != nil {
			s.Close()
			return nil, fmt.Errorf("bench: warm up CQL session on %s: %w", addr, err)
		}
	}
	return s, nil
}

// noAgreementLogger is the logger of a gocql session that does not wait
// for schema agreement. gocql has no setting for that: with
// MaxWaitSchemaAgreement 0 its wait after a schema change looks no time,
// logs that the versions are not consistent (listing none, having read
// none) and returns; the DDL succeeds. That line, once per DDL, is
// dropped; the driver's other lines go to the standard logger, as they
// do by default.
type noAgreementLogger struct{}

// agreementSkipped is how gocql's line about the wait it did not make
// begins.
const agreementSkipped = "gocql: cluster schema versions not consistent"

func (noAgreementLogger) Print(v ...any) { logUnlessSkipped(fmt.Sprint(v...)) }

func (noAgreementLogger) Printf(format string, v ...any) { logUnlessSkipped(fmt.Sprintf(format, v...)) }

func (noAgreementLogger) Println(v ...any) { logUnlessSkipped(fmt.Sprintln(v...)) }

// logUnlessSkipped logs s unless it is gocql's line about the wait it did
// not make.
func logUnlessSkipped(s string) {
	if !strings.HasPrefix(s, agreementSkipped) {
		log.Print(s)
	}
}
