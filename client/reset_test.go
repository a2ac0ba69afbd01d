package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// resetProxy stands for a member killed right after it received a
// request: it forwards connections to target and, once a client has sent
// bytes holding marker, forwards them, resets that client's connection and
// stops listening (later connections are refused). The connection to
// target stays open until the test ends, so the member handles the
// request as if the client were still there.
type resetProxy struct {
	lis    net.Listener
	target string
	marker []byte

	mu     sync.Mutex // guards conns and closed
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
	reset  chan struct{} // closed at the reset
	once   sync.Once
}

func startResetProxy(t *testing.T, target string, marker []byte) *resetProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &resetProxy{lis: lis, target: target, marker: marker, reset: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		p.lis.Close()
		p.mu.Lock()
		p.closed = true
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *resetProxy) addr() string { return p.lis.Addr().String() }

// keep records c for closing at the end, or closes it at once when the
// proxy has stopped.
func (p *resetProxy) keep(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return
	}
	p.conns = append(p.conns, c)
}

func (p *resetProxy) accept() {
	for {
		down, err := p.lis.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			down.Close()
			continue
		}
		p.keep(down)
		p.keep(up)
		p.wg.Go(func() { io.Copy(down, up) })
		p.wg.Go(func() { p.forward(down, up) })
	}
}

// forward copies what the client sends to the member until the marker
// passes, then resets the client's connection and stops listening.
func (p *resetProxy) forward(down, up net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := down.Read(buf)
		if n > 0 {
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
			if bytes.Contains(buf[:n], p.marker) {
				p.once.Do(func() {
					down.(*net.TCPConn).SetLinger(0)
					down.Close()
					p.lis.Close()
					close(p.reset)
				})
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestMemberKilledAfterReceivingAnExecute: the member that received an
// Execute goes away before answering and every other endpoint refuses
// connections: the call's error is the outcome unknown with the request
// id (code DeadlineExceeded), not Unavailable. The member did apply it,
// which RequestOutcome tells, and sending it again under the id is
// answered with the first result.
func TestMemberKilledAfterReceivingAnExecute(t *testing.T) {
	ks := unique("reset")
	stmt := createKeyspaceStatement(ks)
	p := startResetProxy(t, live, []byte(ks))
	c, err := client.New(client.Config{Endpoints: []string{p.addr(), client.DeadAddr(t), client.DeadAddr(t)}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	_, err = c.Execute(ctx, &pb.ExecuteRequest{Statements: stmt})
	var oe *client.OutcomeUnknownError
	if !errors.As(err, &oe) || !errors.Is(err, client.ErrOutcomeUnknown) || status.Code(err) != codes.DeadlineExceeded || oe.RequestID == "" {
		t.Fatalf("Execute through a member killed after receiving it: %v (%s), want the outcome unknown with the request id", err, status.Code(err))
	}
	<-p.reset

	member := newClient(t, live)
	var outcome *pb.GetRequestOutcomeResponse
	deadline := time.Now().Add(20 * time.Second)
	for {
		outcome, err = member.RequestOutcome(ctx, oe.RequestID)
		if err == nil && outcome.State == "applied" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RequestOutcome(%s): %v, %v; want applied", oe.RequestID, outcome, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	again, err := member.Execute(ctx, &pb.ExecuteRequest{Statements: stmt, RequestId: oe.RequestID})
	if err != nil || again.Epoch != outcome.Epoch {
		t.Fatalf("the request again under its id: %v, %v; want the first result, epoch %d", again, err, outcome.Epoch)
	}
}

// TestRetryAfterAResetSettlesIt: the member the Execute went to first
// resets the connection after receiving it; the next endpoint answers
// under the same request id, once: the call succeeds, and the keyspace
// was created by one change.
func TestRetryAfterAResetSettlesIt(t *testing.T) {
	ks := unique("settled")
	p := startResetProxy(t, live, []byte(ks))
	c := newClient(t, p.addr(), live)
	ctx := context.Background()
	resp, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: createKeyspaceStatement(ks)})
	if err != nil || len(resp.Results) != 1 || !resp.Results[0].Applied {
		t.Fatalf("Execute: %v, %v; want it applied through the second endpoint", resp, err)
	}
	select {
	case <-p.reset:
	default:
		t.Fatal("the first endpoint never saw the request")
	}
	hist, err := c.History(ctx, &pb.HistoryRequest{Keyspace: ks})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Events) != 1 || hist.Events[0].Epoch != resp.Epoch {
		t.Errorf("history of %s: %v; want one CREATE KEYSPACE at epoch %d", ks, hist.Events, resp.Epoch)
	}
}
