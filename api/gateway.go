package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// The gateway (grpc-gateway, serving the JSON API on the HTTP listener)
// calls the metadata service through a gRPC server of its own, over
// in-memory connections, instead of dialling the client gRPC listener:
//
//   - HTTP requests still go through the same interceptors as gRPC ones
//     (metrics, limits, auth, stream limits): both servers are built from
//     the same options;
//   - the gateway's connections are not a bottleneck shared by every HTTP
//     client: the internal server puts no cap on streams per connection
//     (what the HTTP listener takes in is bounded: its connections and
//     their requests in flight; and the stream limits apply as over
//     gRPC), and the calls are spread over a pool of connections;
//   - they need no file descriptor and count against no cap of the client
//     listeners, so that a flood of connections or a shortage of
//     descriptors cannot cut the gateway off from the service, and there
//     is no dial to retry after one.

// errGatewayClosed is what a gateway dial returns once the server closed.
var errGatewayClosed = errors.New("api: the gateway's in-memory listener is closed")

// pipeListener is an in-memory net.Listener: dial hands one end of a
// net.Pipe to Accept.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the server end of the next dial.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and later dials; connections made stay open.
func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

// Addr is the listener's address, "gateway".
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client end of a new connection, once Accept took the
// other.
func (l *pipeListener) dial(ctx context.Context, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	var err error
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		err = errGatewayClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, err
}

// pipeAddr is the address of both ends of a gateway connection.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "gateway" }

// gatewayPool is the gateway's connections to the internal server, used in
// turn: a grpc.ClientConnInterface for the generated client.
type gatewayPool struct {
	conns []*grpc.ClientConn
	next  atomic.Uint64
}

// newGatewayPool opens one connection per core (at least 2) through
// dial, each carrying the gateway's credential (secret).
func newGatewayPool(dial func(context.Context, string) (net.Conn, error), secret string) (*gatewayPool, error) {
	p := &gatewayPool{}
	for range max(2, goruntime.GOMAXPROCS(0)) {
		conn, err := grpc.NewClient("passthrough:///gateway", grpc.WithContextDialer(dial),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(clientWindow), grpc.WithInitialConnWindowSize(clientWindow),
			grpc.WithPerRPCCredentials(gatewayCredential{secret: secret}))
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("gateway connection: %w", err)
		}
		p.conns = append(p.conns, conn)
	}
	return p, nil
}

// pick returns the next connection in turn.
func (p *gatewayPool) pick() *grpc.ClientConn {
	return p.conns[p.next.Add(1)%uint64(len(p.conns))]
}

// Invoke implements grpc.ClientConnInterface.
func (p *gatewayPool) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return p.pick().Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface.
func (p *gatewayPool) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return p.pick().NewStream(ctx, desc, method, opts...)
}

// Close closes every connection.
func (p *gatewayPool) Close() {
	for _, c := range p.conns {
		c.Close()
	}
}

// newGatewayServer is the gateway's own gRPC server: the metadata service
// behind the same interceptors as the client one (serviceOptions), with no
// cap on streams per connection and no TLS (its connections never leave
// the process).
func (h *Handlers) newGatewayServer() *grpc.Server {
	srv := grpc.NewServer(h.serviceOptions()...)
	pb.RegisterMetadataServiceServer(srv, h.svc)
	return srv
}
