package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// rpcCounter counts the calls a test server receives, by method, with
// an interceptor, and the consistency each read asked for.
type rpcCounter struct {
	mu          sync.Mutex // guards calls and consistency
	calls       []string   // method names, in the order they came
	consistency []string   // "Method consistency" of the requests that have one
}

// options are the server options that count the server's calls.
func (rc *rpcCounter) options() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			rc.add(info.FullMethod, req)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			rc.add(info.FullMethod, nil)
			return h(srv, ss)
		}),
	}
}

func (rc *rpcCounter) add(fullMethod string, req any) {
	name := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.calls = append(rc.calls, name)
	if r, ok := req.(interface{ GetConsistency() string }); ok && r.GetConsistency() != "" {
		rc.consistency = append(rc.consistency, name+" "+r.GetConsistency())
	}
}

// methods returns the methods called so far, in order.
func (rc *rpcCounter) methods() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.calls)
}

func (rc *rpcCounter) count() int { return len(rc.methods()) }

func (rc *rpcCounter) consistencies() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.consistency)
}

// countedFake is a fake served with an rpcCounter, stopped by the test
// or when it ends.
type countedFake struct {
	*fake
	rpcs   *rpcCounter
	served *testkit.Served
}

// startCounted serves f (a new fake when nil) on addr ("": a free port)
// with a counter.
func startCounted(t *testing.T, addr string, f *fake) *countedFake {
	t.Helper()
	if f == nil {
		f = &fake{}
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	rc := &rpcCounter{}
	s := testkit.Start(t, f, testkit.At(addr), testkit.WithGRPC(rc.options()...))
	f.addr = s.Addr
	return &countedFake{fake: f, rpcs: rc, served: s}
}

// routedCall is one method of the service called through the Client.
type routedCall struct {
	method string // the service's method the call sends
	read   bool   // sent to the read endpoints
	call   func(context.Context, *Client) error
}

// firstRecv receives the first message of a stream just opened.
func firstRecv[M any](st grpc.ServerStreamingClient[M], err error) error {
	if err != nil {
		return err
	}
	_, err = st.Recv()
	return err
}

// routedCalls are the Client's calls of every method of the service.
var routedCalls = []routedCall{
	{"GetSchema", true, func(ctx context.Context, c *Client) error {
		_, err := c.GetSchema(ctx, &pb.GetSchemaRequest{Consistency: ConsistencyLinearizable})
		return err
	}},
	{"GetKeyspace", true, func(ctx context.Context, c *Client) error {
		_, err := c.Describe(ctx, "ks", "", &DescribeOptions{AtEpoch: proto.Uint64(3)})
		return err
	}},
	{"GetTable", true, func(ctx context.Context, c *Client) error {
		_, err := c.Describe(ctx, "ks", "t", &DescribeOptions{Consistency: ConsistencyLinearizable})
		return err
	}},
	{"GetGuardrails", true, func(ctx context.Context, c *Client) error {
		_, err := c.KeyspaceGuardrails(ctx, "ks")
		return err
	}},
	{"History", true, func(ctx context.Context, c *Client) error {
		_, err := c.History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(1)})
		return err
	}},
	{"Plan", true, func(ctx context.Context, c *Client) error {
		_, err := c.Plan(ctx, &pb.PlanRequest{Desired: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
		return err
	}},
	{"GetRequestOutcome", true, func(ctx context.Context, c *Client) error {
		_, err := c.RequestOutcome(ctx, "id")
		return err
	}},
	{"Watch", true, func(ctx context.Context, c *Client) error {
		st, err := c.Watch(ctx, &pb.WatchRequest{})
		return firstRecv(st, err)
	}},
	{"Backup", true, func(ctx context.Context, c *Client) error {
		return firstRecv(c.Backup(ctx, &pb.BackupRequest{}))
	}},
	{"SaveSnapshot", true, func(ctx context.Context, c *Client) error {
		return firstRecv(c.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{}))
	}},
	{"Execute", false, func(ctx context.Context, c *Client) error {
		_, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP TABLE ks.t"})
		return err
	}},
	{"SetGuardrails", false, func(ctx context.Context, c *Client) error {
		_, err := c.SetKeyspaceGuardrails(ctx, "ks", map[string]string{"tables_warn_threshold": "5"})
		return err
	}},
	{"AddMember", false, func(ctx context.Context, c *Client) error {
		_, err := c.AddMember(ctx, &pb.AddMemberRequest{Name: "m4", PeerAddr: "127.0.0.1:1"})
		return err
	}},
	{"RemoveMember", false, func(ctx context.Context, c *Client) error {
		_, err := c.RemoveMember(ctx, &pb.RemoveMemberRequest{Id: "m4"})
		return err
	}},
	{"RepairMember", false, func(ctx context.Context, c *Client) error {
		_, err := c.RepairMember(ctx, &pb.RepairMemberRequest{Id: "m2"})
		return err
	}},
	{"ListMembers", false, func(ctx context.Context, c *Client) error {
		_, err := c.ListMembers(ctx, &pb.ListMembersRequest{})
		return err
	}},
	{"CheckCluster", false, func(ctx context.Context, c *Client) error {
		_, err := c.CheckCluster(ctx, &pb.CheckClusterRequest{})
		return err
	}},
}

// TestEveryMethodIsRouted: each method of the service has its call in
// routedCalls, so that a new one is not added without saying where it
// goes.
func TestEveryMethodIsRouted(t *testing.T) {
	var service []string
	for _, m := range pb.MetadataService_ServiceDesc.Methods {
		service = append(service, m.MethodName)
	}
	for _, s := range pb.MetadataService_ServiceDesc.Streams {
		service = append(service, s.StreamName)
	}
	var routed []string
	for _, rc := range routedCalls {
		routed = append(routed, rc.method)
	}
	slices.Sort(service)
	slices.Sort(routed)
	if !slices.Equal(service, routed) {
		t.Errorf("the service's methods are %q, the routed calls %q", service, routed)
	}
}

// TestReadsGoToReadEndpointsAndChangesToEndpoints: with a read endpoint
// and an endpoint, every read and watch reaches the read endpoint only
// and every change and administration call the endpoint only, counted
// by each server's interceptor; a linearizable read arrives as such.
func TestReadsGoToReadEndpointsAndChangesToEndpoints(t *testing.T) {
	w, r := startCounted(t, "", nil), startCounted(t, "", nil)
	c := newTestClient(t, Config{Endpoints: []string{w.addr}, ReadEndpoints: []string{r.addr}})
	var wantReads, wantWrites []string
	for _, rc := range routedCalls {
		err := rc.call(testCtx(t), c)
		if code := status.Code(err); code != codes.OK && code != codes.Unimplemented {
			t.Errorf("%s: %v (want an answer of the fake: OK or Unimplemented)", rc.method, err)
		}
		if rc.read {
			wantReads = append(wantReads, rc.method)
		} else {
			wantWrites = append(wantWrites, rc.method)
		}
	}
	if got := r.rpcs.methods(); !slices.Equal(got, wantReads) {
		t.Errorf("the read endpoint received %q, want %q", got, wantReads)
	}
	if got := w.rpcs.methods(); !slices.Equal(got, wantWrites) {
		t.Errorf("the endpoint received %q, want %q", got, wantWrites)
	}
	if got, want := r.rpcs.consistencies(), []string{"GetSchema linearizable", "GetTable linearizable"}; !slices.Equal(got, want) {
		t.Errorf("the read endpoint was asked for consistencies %q, want %q", got, want)
	}
}

// TestWithoutReadEndpointsReadsGoToEndpoints: the default sends
// everything to Endpoints.
func TestWithoutReadEndpointsReadsGoToEndpoints(t *testing.T) {
	w := startCounted(t, "", nil)
	c := newTestClient(t, Config{Endpoints: []string{w.addr}})
	for _, rc := range routedCalls {
		if err := rc.call(testCtx(t), c); status.Code(err) != codes.OK && status.Code(err) != codes.Unimplemented {
			t.Errorf("%s: %v", rc.method, err)
		}
	}
	if got := w.rpcs.count(); got != len(routedCalls) {
		t.Errorf("the endpoint received %d calls, want %d: %q", got, len(routedCalls), w.rpcs.methods())
	}
}

// readOn calls GetSchema and checks that it was answered by want alone
// among servers (its count grew by one, the others' did not).
func readOn(t *testing.T, c *Client, want *countedFake, servers ...*countedFake) {
	t.Helper()
	before := make([]int, len(servers))
	for i, s := range servers {
		before[i] = s.rpcs.count()
	}
	if _, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); err != nil {
		t.Fatalf("GetSchema: %v", err)
	}
	for i, s := range servers {
		d := s.rpcs.count() - before[i]
		switch {
		case s == want && d != 1:
			t.Errorf("%s received %d calls, want the read", s.addr, d)
		case s != want && d != 0:
			t.Errorf("%s received %d calls, want none (the read is %s's)", s.addr, d, want.addr)
		}
	}
}

// TestReadEndpointFailoverThenFallback: a read endpoint that goes down
// is passed over for the next one, which later reads start at; with
// every read endpoint down (refusing connections, or Unavailable) reads
// fall back to the endpoint at once, and they come back to a read
// endpoint once it is up again. Changes stay on the endpoint throughout.
func TestReadEndpointFailoverThenFallback(t *testing.T) {
	r1, r2, w := startCounted(t, "", nil), startCounted(t, "", nil), startCounted(t, "", nil)
	all := []*countedFake{r1, r2, w}
	c := newTestClient(t, Config{Endpoints: []string{w.addr}, ReadEndpoints: []string{r1.addr, r2.addr}, ConnectTimeout: 5 * time.Second})
	readOn(t, c, r1, all...)
	r1.served.Stop()
	readOn(t, c, r2, all...)
	readOn(t, c, r2, all...) // starts where the last read was answered
	r2.served.Stop()
	readOn(t, c, w, all...) // well within ConnectTimeout: in the same round
	readOn(t, c, w, all...)
	if _, err := c.Execute(testCtx(t), &pb.ExecuteRequest{Statements: "DROP TABLE ks.t"}); err != nil {
		t.Fatal(err)
	}
	if got := w.rpcs.methods(); !slices.Equal(got, []string{"GetSchema", "GetSchema", "Execute"}) {
		t.Errorf("the endpoint received %q", got)
	}

	// r1 comes back, Unavailable for its first calls (a member starting):
	// reads still fall back until it answers, then go to it again.
	back := startCounted(t, r1.addr, &fake{})
	back.unavailable.Store(2)
	waitUntil(t, "a read answered by the read endpoint back up", func() error {
		if _, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); err != nil {
			return err
		}
		if back.calls.Load() <= 2 {
			return fmt.Errorf("%d calls reached it", back.calls.Load())
		}
		return nil
	})
	readOn(t, c, back, back, w)
}

// TestReadNoEndpointAnswers: with every read endpoint and endpoint down,
// a read is Unavailable naming each, the read endpoints first, in the
// order tried.
func TestReadNoEndpointAnswers(t *testing.T) {
	r1, r2, w := deadAddr(t), deadAddr(t), deadAddr(t)
	c := newTestClient(t, Config{Endpoints: []string{w}, ReadEndpoints: []string{r1, r2}, ConnectTimeout: 50 * time.Millisecond, Timeout: 5 * time.Second})
	_, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("GetSchema: %v, want Unavailable", err)
	}
	msg := status.Convert(err).Message()
	i1, i2, iw := strings.Index(msg, r1+": "), strings.Index(msg, r2+": "), strings.Index(msg, w+": ")
	if i1 < 0 || i2 < i1 || iw < i2 {
		t.Errorf("error %q does not name %s, %s then %s", msg, r1, r2, w)
	}
	// A change does not try the read endpoints.
	_, err = c.Execute(testCtx(t), &pb.ExecuteRequest{Statements: "DROP TABLE ks.t"})
	if msg := status.Convert(err).Message(); strings.Contains(msg, r1) || !strings.Contains(msg, w) {
		t.Errorf("Execute: %v, want Unavailable naming %s alone", err, w)
	}
}

// TestReadEndpointsConfig: ReadEndpoints are checked like Endpoints, and
// an address in both is one endpoint.
func TestReadEndpointsConfig(t *testing.T) {
	if _, err := New(Config{Endpoints: []string{"127.0.0.1:1"}, ReadEndpoints: []string{"127.0.0.1:2", ""}}); err == nil || !strings.Contains(err.Error(), "ReadEndpoints[1]") {
		t.Errorf("an empty read endpoint: %v", err)
	}
	var plain *PlaintextTokenError
	_, err := New(Config{Endpoints: []string{"127.0.0.1:1"}, ReadEndpoints: []string{"observer.example:7070"}, Token: "t"})
	if !errors.As(err, &plain) || plain.Endpoint != "observer.example:7070" {
		t.Errorf("a token in plaintext to a read endpoint: %v", err)
	}
	eps, rs := newEndpoints(Config{Endpoints: []string{"w:1", "r:1", "w:1"}, ReadEndpoints: []string{"r:1", "o:1"}})
	var addrs []string
	for i := range eps {
		addrs = append(addrs, eps[i].addr)
	}
	if want := []string{"r:1", "o:1", "w:1"}; !slices.Equal(addrs, want) {
		t.Errorf("endpoints %q, want %q", addrs, want)
	}
	r := rs.read()
	var order []string
	for k := range r.len() {
		order = append(order, eps[r.at(k)].addr)
	}
	if want := []string{"r:1", "o:1", "w:1"}; !slices.Equal(order, want) {
		t.Errorf("a read tries %q, want %q", order, want)
	}
	w := rs.write()
	order = order[:0]
	for k := range w.len() {
		order = append(order, eps[w.at(k)].addr)
	}
	if want := []string{"w:1", "r:1"}; !slices.Equal(order, want) {
		t.Errorf("a change tries %q, want %q", order, want)
	}
}

// TestWatchResumesAcrossReadEndpoints: a watch on two read endpoints and
// an endpoint, each failing after some messages (one resending what the
// client had, one failing at once): it goes on on the other read
// endpoint, falls back to the endpoint only when neither read endpoint
// takes it, and from there back to a read endpoint; the caller sees each
// epoch once, in order.
func TestWatchResumesAcrossReadEndpoints(t *testing.T) {
	noLeaks(t)
	fd := newFeed(0, 1, 2, 3, 4, 5, 6, 7, 8)
	a := startWatchFake(t, "a", fd, plan{send: 2, end: codes.Unavailable}, plan{send: 0, end: codes.Unavailable})
	b := startWatchFake(t, "b", fd, plan{send: 2, rewind: 1, end: codes.Unavailable})
	w := startWatchFake(t, "w", fd, plan{send: 2, end: codes.Unavailable})
	c := newTestClient(t, Config{Endpoints: []string{w.addr}, ReadEndpoints: []string{a.addr, b.addr}, Timeout: time.Hour, ConnectTimeout: 50 * time.Millisecond})
	st, err := c.Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := receive(t, st, 8), events(1, 2, 3, 4, 5, 6, 7, 8); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, a, "0", "3")
	checkRequests(t, b, "2", "5")
	checkRequests(t, w, "3")
}
