package client

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// feed is the change feed of a cluster that the watch fakes serve: one
// events message per epoch, in epoch order.
type feed struct {
	msgs []*pb.WatchResponse
	// now is the epoch of the progress message that starts a watch from
	// now; the messages after it are sent next.
	now uint64
}

// newFeed returns a feed with one event at each epoch.
func newFeed(now uint64, epochs ...uint64) *feed {
	f := &feed{now: now}
	for _, e := range epochs {
		f.msgs = append(f.msgs, &pb.WatchResponse{Type: string(WatchEvents), Epoch: e, Events: []*pb.Event{
			{Epoch: e, Kind: "CREATE TABLE", Keyspace: "ks", Table: fmt.Sprintf("t%d", e)},
		}})
	}
	return f
}

// plan is how a watch fake serves one Watch call.
type plan struct {
	// send is how many messages the stream sends before it ends as end
	// says; -1 sends them all and holds the stream open. A stream that
	// has fewer to send holds it open too.
	send int
	// end is the stream's status after send messages: OK ends it with
	// io.EOF at the client.
	end codes.Code
	// drop ends it by stopping the fake's server instead: the connection
	// is lost, and the address refuses connections from then on.
	drop bool
	// rewind sends this many messages from before the one asked for
	// first: what the client already had.
	rewind int
}

// serveAll is the plan of a stream that sends everything and stays open.
var serveAll = plan{send: -1}

// watchFake is a member that serves Watch from a feed, each call as the
// next of its plans says (serveAll once they are used up). It sends its
// name in the header and the trailer ("fake").
type watchFake struct {
	pb.UnimplementedMetadataServiceServer
	name string
	feed *feed
	// pruned, when not zero, is the epoch before which the fake keeps no
	// history: a watch from before it gets a resync message at pruned.
	pruned uint64
	addr   string

	mu     sync.Mutex // guards plans, froms and served
	plans  []plan
	froms  []string        // from_epoch of each Watch call ("-" when absent)
	served *testkit.Served // what a plan's drop stops
}

// startWatchFake serves a watch fake on a loopback port until the test
// ends.
func startWatchFake(t testing.TB, name string, fd *feed, plans ...plan) *watchFake {
	t.Helper()
	return startWatchFakeAt(t, "127.0.0.1:0", name, fd, plans...)
}

// startWatchFakeAt is startWatchFake on addr: a member that comes back
// where it was, or where nothing listened.
func startWatchFakeAt(t testing.TB, addr, name string, fd *feed, plans ...plan) *watchFake {
	t.Helper()
	f := &watchFake{name: name, feed: fd, plans: plans}
	s := testkit.Start(t, f, testkit.At(addr))
	f.addr = s.Addr
	f.mu.Lock()
	f.served = s
	f.mu.Unlock()
	return f
}

// take records req and returns the plan of its call and the server.
func (f *watchFake) take(req *pb.WatchRequest) (plan, *testkit.Served) {
	f.mu.Lock()
	defer f.mu.Unlock()
	from := "-"
	if req.FromEpoch != nil {
		from = fmt.Sprint(*req.FromEpoch)
	}
	f.froms = append(f.froms, from)
	if len(f.plans) == 0 {
		return serveAll, f.served
	}
	p := f.plans[0]
	f.plans = f.plans[1:]
	return p, f.served
}

// requests returns the from_epoch of each Watch call so far.
func (f *watchFake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.froms...)
}

// messages returns what a watch of req is sent, rewind messages early.
func (f *watchFake) messages(req *pb.WatchRequest, rewind int) []*pb.WatchResponse {
	var out []*pb.WatchResponse
	after := f.feed.now
	if req.FromEpoch == nil {
		out = append(out, &pb.WatchResponse{Type: string(WatchProgress), Epoch: f.feed.now})
	} else if after = *req.FromEpoch; after < f.pruned {
		out = append(out, &pb.WatchResponse{Type: string(WatchResync), Epoch: f.pruned, Cql: "CREATE KEYSPACE ks;\n"})
		after = f.pruned
	}
	i := 0
	for i < len(f.feed.msgs) && f.feed.msgs[i].Epoch <= after {
		i++
	}
	return append(out, f.feed.msgs[max(i-rewind, 0):]...)
}

func (f *watchFake) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	p, served := f.take(req)
	ctx := stream.Context()
	stream.SetHeader(metadata.Pairs("fake", f.name))
	stream.SetTrailer(metadata.Pairs("fake", f.name))
	msgs := f.messages(req, p.rewind)
	sent := 0
	for _, m := range msgs {
		if sent == p.send {
			break
		}
		if err := stream.Send(proto.CloneOf(m)); err != nil {
			return err
		}
		sent++
	}
	switch {
	case sent != p.send:
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	case p.drop:
		go served.Stop()
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	case p.end == codes.OK:
		return nil
	}
	return status.Errorf(p.end, "fake %s says %s", f.name, p.end)
}
