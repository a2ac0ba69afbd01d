package member

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/metalog/metalog/member/internal/peerrpc"
)

// statusConns keeps a client connection to each other member's peer port
// for the status calls of ListMembers, which the CQL listener makes every
// few seconds and whenever a driver reads system.peers (after each of its
// DDL, to wait for schema agreement): a connection per call would cost a
// dial and a handshake each time, and take a new ephemeral port. A
// connection that fails reconnects within statusMaxBackoff, so that a
// member that comes back is seen about as soon as a new dial would see
// it; the other status calls (the prober, the checks) dial their own.
type statusConns struct {
	dial   grpc.DialOption
	mu     sync.Mutex                  // guards conns and closed
	conns  map[string]*grpc.ClientConn // by peer address
	closed bool
}

// statusMaxBackoff is the longest a failed status connection waits
// before it dials again.
const statusMaxBackoff = time.Second

// errStatusConnsClosed answers a status call made while the member stops.
var errStatusConnsClosed = errors.New("member: stopping")

// ask asks the member at addr for its status as req says, within
// statusTimeout.
func (p *statusConns) ask(ctx context.Context, addr string, req *peerrpc.NodeStatusRequest) (*MemberStatus, error) {
	conn, err := p.conn(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	got, err := peerrpc.NodeStatusOn(ctx, conn, req)
	if err != nil {
		return nil, err
	}
	return fromPeerMember(got), nil
}

// conn returns the connection to addr, made when there is none.
func (p *statusConns) conn(addr string) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errStatusConnsClosed
	}
	if c, ok := p.conns[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient(addr, p.dial, grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: statusMaxBackoff},
		MinConnectTimeout: statusTimeout,
	}))
	if err != nil {
		return nil, err
	}
	if p.conns == nil {
		p.conns = map[string]*grpc.ClientConn{}
	}
	p.conns[addr] = c
	return c, nil
}

// keepOnly closes the connections to the addresses peers does not hold:
// members removed, or moved.
func (p *statusConns) keepOnly(peers map[uint64]string) {
	keep := make(map[string]bool, len(peers))
	for _, addr := range peers {
		keep[addr] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, c := range p.conns {
		if !keep[addr] {
			c.Close()
			delete(p.conns, addr)
		}
	}
}

// close closes every connection; later calls fail. A nil statusConns
// (a member that stopped before it had one) has none.
func (p *statusConns) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for addr, c := range p.conns {
		c.Close()
		delete(p.conns, addr)
	}
}
