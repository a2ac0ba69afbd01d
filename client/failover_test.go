package client

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// testCtx bounds a test's calls, so that a broken retry loop fails the
// test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFailoverMovesOnAndStaysOnTheEndpointThatAnswered(t *testing.T) {
	down := startFake(t, &fake{code: codes.Unavailable})
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{deadAddr(t), down.addr, up.addr}})
	ctx := testCtx(t)
	for i := range 3 {
		r, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
		if err != nil || r.Epoch != 7 {
			t.Fatalf("call %d: %v, %v; want the live endpoint's answer", i, r, err)
		}
	}
	// The first call tried the dead and the unavailable endpoints; the
	// later ones started where the first was answered.
	if got := down.calls.Load(); got != 1 {
		t.Errorf("the Unavailable endpoint was called %d times, want 1", got)
	}
	if got := up.calls.Load(); got != 3 {
		t.Errorf("the live endpoint was called %d times, want 3", got)
	}
}

func TestAnswerOtherThanUnavailableIsFinal(t *testing.T) {
	refusing := startFake(t, &fake{code: codes.InvalidArgument})
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{refusing.addr, up.addr}})
	_, err := c.Execute(testCtx(t), &pb.ExecuteRequest{Statements: "CREATE KEYSPACE"})
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "fake says InvalidArgument" {
		t.Fatalf("Execute: %v, want the first endpoint's InvalidArgument as sent", err)
	}
	if got := up.calls.Load(); got != 0 {
		t.Errorf("the second endpoint was called %d times after a final answer", got)
	}
}

func TestAllUnavailableGoesRoundUntilTheDeadline(t *testing.T) {
	a := startFake(t, &fake{code: codes.Unavailable})
	b := startFake(t, &fake{code: codes.Unavailable})
	c := newTestClient(t, Config{Endpoints: []string{a.addr, b.addr}, Timeout: 500 * time.Millisecond})
	_, err := c.GetSchema(context.Background(), &pb.GetSchemaRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("GetSchema: %v, want Unavailable", err)
	}
	// The message names every endpoint with its answer.
	if want := a.addr + ": fake says Unavailable; " + b.addr + ": fake says Unavailable"; status.Convert(err).Message() != want {
		t.Errorf("message %q, want %q", status.Convert(err).Message(), want)
	}
	// 500 ms holds the first round and at least the one after 100 ms.
	if a.calls.Load() < 2 || b.calls.Load() < 2 {
		t.Errorf("calls %d and %d: want at least two rounds", a.calls.Load(), b.calls.Load())
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestRequestIDMadeOnceForAllAttempts(t *testing.T) {
	down := startFake(t, &fake{code: codes.Unavailable})
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{down.addr, up.addr}})
	ctx := testCtx(t)
	for _, call := range []struct {
		name string
		req  proto.Message
	}{
		{name: "Execute", req: &pb.ExecuteRequest{Statements: "DROP TABLE ks.t", Keyspace: "ks", Atomic: true}},
		{name: "SetGuardrails", req: &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "5"}}},
	} {
		before := proto.Clone(call.req)
		down.calls.Store(0)
		c.routes.writes.last.Store(0) // start at the Unavailable endpoint again
		var err error
		switch req := call.req.(type) {
		case *pb.ExecuteRequest:
			_, err = c.Execute(ctx, req)
		case *pb.SetGuardrailsRequest:
			_, err = c.SetGuardrails(ctx, req)
		}
		if err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		if !proto.Equal(call.req, before) {
			t.Errorf("%s changed the caller's request: %v, was %v", call.name, call.req, before)
		}
		sent := append(down.requestIDs(), up.requestIDs()...)
		if len(sent) != 2 || sent[0] != sent[1] || !uuidV4.MatchString(sent[0]) {
			t.Errorf("%s: request ids sent %q, want one random UUID on both attempts", call.name, sent)
		}
		down.reset(0)
		up.reset(0)
	}

	// The caller's id is sent as given, and the caller's request unchanged.
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{RequestId: "mine"}); err != nil {
		t.Fatal(err)
	}
	if got := up.requestIDs(); len(got) != 1 || got[0] != "mine" {
		t.Errorf("request ids sent %q, want [mine]", got)
	}
}

// TestCopyOf checks the request copy Execute and SetGuardrails make.
func TestCopyOf(t *testing.T) {
	req := &pb.ExecuteRequest{Statements: "s", Keyspace: "k", Atomic: true}
	if got := copyOf(req); !proto.Equal(got, req) || got == req {
		t.Errorf("copyOf(%v) = %v, want an equal, distinct message", req, got)
	}
	if got := copyOf((*pb.SetGuardrailsRequest)(nil)); got == nil {
		t.Error("copyOf(nil) = nil, want a new message")
	}
}

func TestTimeoutBoundsACallWithoutDeadline(t *testing.T) {
	stuck := startFake(t, &fake{block: true})
	c := newTestClient(t, Config{Endpoints: []string{stuck.addr}, Timeout: 200 * time.Millisecond})
	if _, err := c.GetSchema(context.Background(), &pb.GetSchemaRequest{}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("GetSchema on a server that never answers: %v, want DeadlineExceeded", err)
	}
	// Nobody listening: Unavailable once the timeout ends the rounds.
	dead := newTestClient(t, Config{Endpoints: []string{deadAddr(t)}, Timeout: 200 * time.Millisecond})
	if _, err := dead.GetSchema(context.Background(), &pb.GetSchemaRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("GetSchema with no server: %v, want Unavailable", err)
	}
	// The caller's own deadline wins over Timeout.
	long := newTestClient(t, Config{Endpoints: []string{stuck.addr}, Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := long.GetSchema(ctx, &pb.GetSchemaRequest{}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("GetSchema under the caller's deadline: %v, want DeadlineExceeded", err)
	}
}

func TestTokenAndTLS(t *testing.T) {
	ca := testkit.NewCA(t, "metalog-test")
	cert := ca.Issue(t, "metalog-test", testkit.ServerOnly())
	secured := startFake(t, &fake{}, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert.TLS}})))
	ctx := testCtx(t)

	c := newTestClient(t, Config{Endpoints: []string{secured.addr}, TLS: ca.ClientTLS(nil), Token: "s3cret"})
	if _, err := c.GetGuardrails(ctx, &pb.GetGuardrailsRequest{}); err != nil {
		t.Fatalf("GetGuardrails over TLS: %v", err)
	}
	if got := secured.authorizations(); len(got) != 1 || got[0] != "Bearer s3cret" {
		t.Errorf("authorization sent %q, want [Bearer s3cret]", got)
	}
	// Without the TLS configuration the handshake never happens: the call
	// fails its attempts until Timeout ends it, and the server never sees
	// it. Which code the call ends with depends on whether the deadline
	// falls between two attempts (Unavailable, with the endpoint's reason)
	// or during one (DeadlineExceeded), as documented on Client.
	plain := newTestClient(t, Config{Endpoints: []string{secured.addr}, Timeout: 300 * time.Millisecond})
	_, err := plain.GetGuardrails(context.Background(), &pb.GetGuardrailsRequest{})
	if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
		t.Errorf("plaintext to a TLS server: %v, want Unavailable or DeadlineExceeded", err)
	}
	if got := secured.authorizations(); len(got) != 1 {
		t.Errorf("the TLS server saw %d calls, want only the one over TLS", len(got))
	}
	// A token in plaintext goes to loopback only.
	loop := startFake(t, &fake{})
	lc := newTestClient(t, Config{Endpoints: []string{loop.addr}, Token: "s3cret"})
	if _, err := lc.GetGuardrails(ctx, &pb.GetGuardrailsRequest{}); err != nil || len(loop.authorizations()) != 1 || loop.authorizations()[0] != "Bearer s3cret" {
		t.Errorf("token in plaintext to loopback: %v, sent %q", err, loop.authorizations())
	}
}

func TestNewRefusesATokenInPlaintextOffLoopback(t *testing.T) {
	_, err := New(Config{Endpoints: []string{"127.0.0.1:7070", "192.0.2.1:7070"}, Token: "t"})
	var pe *PlaintextTokenError
	if !errors.As(err, &pe) || pe.Endpoint != "192.0.2.1:7070" || !strings.Contains(err.Error(), "plaintext") {
		t.Fatalf("New: %v, want a PlaintextTokenError for 192.0.2.1:7070", err)
	}
	for _, cfg := range []Config{
		{Endpoints: []string{"192.0.2.1:7070"}, Token: "t", TLS: &tls.Config{}},
		{Endpoints: []string{"localhost:7070", "[::1]:7070"}, Token: "t"},
		{Endpoints: []string{"192.0.2.1:7070"}},
	} {
		c, err := New(cfg)
		if err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
			continue
		}
		c.Close()
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "Endpoints"},
		{Config{Endpoints: []string{"127.0.0.1:1", ""}}, "Endpoints[1]"},
		{Config{Endpoints: []string{"127.0.0.1:1"}, Timeout: -time.Second}, "Timeout"},
		{Config{Endpoints: []string{"127.0.0.1:1"}, MaxResponseBytes: -1}, "MaxResponseBytes"},
	} {
		if err := tc.cfg.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
	eps := []string{"127.0.0.1:1"}
	cfg := Config{Endpoints: eps}
	if err := cfg.validate(); err != nil || cfg.Timeout != DefaultTimeout || cfg.MaxResponseBytes != DefaultMaxResponseBytes {
		t.Errorf("validate filled %+v, %v; want the defaults", cfg, err)
	}
	if eps[0] = "changed"; cfg.Endpoints[0] != "127.0.0.1:1" {
		t.Error("the Config shares the caller's Endpoints slice")
	}
}

func TestClosed(t *testing.T) {
	up := startFake(t, &fake{})
	c, err := New(Config{Endpoints: []string{up.addr}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); !errors.Is(err, ErrClosed) {
		t.Errorf("GetSchema after Close: %v, want ErrClosed", err)
	}
}

func TestConcurrentCallsShareOneConnectionPerEndpoint(t *testing.T) {
	down := startFake(t, &fake{code: codes.Unavailable})
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{deadAddr(t), down.addr, up.addr}})
	ctx := testCtx(t)
	const goroutines, calls = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "x"}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := up.calls.Load(); got != goroutines*calls {
		t.Errorf("the live endpoint answered %d calls, want %d", got, goroutines*calls)
	}
	// Each id is distinct: one per call, not per attempt.
	seen := map[string]bool{}
	for _, id := range up.requestIDs() {
		if seen[id] {
			t.Fatalf("request id %s sent for two calls", id)
		}
		seen[id] = true
	}
	for i := range c.eps {
		if c.eps[i].conn.Load() == nil {
			t.Errorf("endpoint %d was never dialed", i)
		}
	}
}

// TestCallAllocatesNothingOfItsOwn compares a call through the Client
// with the same call on the generated client: failover adds no
// allocation when the first endpoint answers and ctx has a deadline.
func TestCallAllocatesNothingOfItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{up.addr}})
	ctx := testCtx(t)
	req := &pb.ExecuteRequest{Statements: "x", RequestId: "fixed"}
	raw, err := c.rpc(0)
	if err != nil {
		t.Fatal(err)
	}
	up.reset(1000) // no growth of the fake's record while counting
	direct := testing.AllocsPerRun(200, func() { raw.Execute(ctx, req) })
	through := testing.AllocsPerRun(200, func() { c.Execute(ctx, req) })
	if through > direct+1 {
		t.Errorf("a call through the Client allocates %.1f times, the generated client %.1f", through, direct)
	}
	t.Logf("allocations per Execute: generated client %.1f, Client %.1f", direct, through)
}

// BenchmarkExecute compares an Execute through the Client with the same
// call on the generated client, on a fake member that answers at once, so
// that the Client's own cost is what differs.
func BenchmarkExecute(b *testing.B) {
	up := startFake(b, &fake{})
	c := newTestClient(b, Config{Endpoints: []string{up.addr}})
	raw, err := c.rpc(0)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	req := &pb.ExecuteRequest{Statements: "x", RequestId: "fixed"}
	for _, bc := range []struct {
		name string
		rpc  pb.MetadataServiceClient
	}{{"generated", raw}, {"client", c}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.rpc.Execute(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestHistoryFailsOverLikeTheReads: History moves on from an Unavailable
// endpoint, and its other errors are final.
func TestHistoryFailsOverLikeTheReads(t *testing.T) {
	down := startFake(t, &fake{code: codes.Unavailable})
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{down.addr, up.addr}})
	r, err := c.History(testCtx(t), &pb.HistoryRequest{FromEpoch: proto.Uint64(4)})
	if err != nil || r.Epoch != 11 || len(r.Events) != 1 || r.Events[0].Epoch != 5 {
		t.Fatalf("History: %v, %v; want the live endpoint's answer to the request", r, err)
	}
	pruned := startFake(t, &fake{code: codes.OutOfRange})
	c = newTestClient(t, Config{Endpoints: []string{pruned.addr, up.addr}})
	if _, err := c.History(testCtx(t), &pb.HistoryRequest{}); status.Code(err) != codes.OutOfRange {
		t.Errorf("History of pruned epochs: %v, want OutOfRange", err)
	}
}

// TestDescribeAtEpoch: DescribeOptions.AtEpoch is sent as at_epoch, 0
// included, and only when set.
func TestDescribeAtEpoch(t *testing.T) {
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{up.addr}})
	ctx := testCtx(t)
	for _, d := range []struct {
		ks, table string
		at        *uint64
		want      string
	}{
		{"", "", proto.Uint64(0), "schema"},
		{"ks", "", proto.Uint64(3), "keyspace ks"},
		{"ks", "t", proto.Uint64(4), "table ks.t"},
		{"ks", "t", nil, "table ks.t"},
	} {
		if got, err := c.Describe(ctx, d.ks, d.table, &DescribeOptions{AtEpoch: d.at}); err != nil || got != d.want {
			t.Errorf("Describe(%q, %q): %q, %v; want %q", d.ks, d.table, got, err, d.want)
		}
	}
	if got, want := up.atEpochs(), []string{"GetSchema 0", "GetKeyspace 3", "GetTable 4", "GetTable -"}; !slices.Equal(got, want) {
		t.Errorf("at_epoch sent: %q, want %q", got, want)
	}
}

// TestSaveSnapshotFailsOverBeforeTheFirstChunk: SaveSnapshot moves on from
// an Unavailable endpoint, returns the stream once its first message came,
// and hands out every chunk, the first included, then io.EOF.
func TestSaveSnapshotFailsOverBeforeTheFirstChunk(t *testing.T) {
	down := startFake(t, &fake{code: codes.Unavailable})
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{down.addr, up.addr}})
	stream, err := c.SaveSnapshot(testCtx(t), &pb.SaveSnapshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	first, err := stream.Recv()
	if err != nil || first.Epoch != 11 || first.Size != 5 {
		t.Fatalf("first message %v, %v", first, err)
	}
	data = append(data, first.Data...)
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, m.Data...)
	}
	if string(data) != "abcde" {
		t.Errorf("received %q, want abcde", data)
	}
	denied := startFake(t, &fake{code: codes.PermissionDenied})
	c = newTestClient(t, Config{Endpoints: []string{denied.addr, up.addr}})
	if _, err := c.SaveSnapshot(testCtx(t), &pb.SaveSnapshotRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("SaveSnapshot refused: %v, want PermissionDenied from the first endpoint", err)
	}
}
