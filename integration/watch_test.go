package integration

import (
	"context"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// TestWatchResumesAfterKill9: a client.Follow connected to one member,
// which is killed with SIGKILL while 4 clients run DDL through the
// others, goes on on another member and sees every epoch exactly once, in
// order.
func TestWatchResumesAfterKill9(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	victim := c.leader()
	var eps []string // the victim first: the watch starts there
	eps = append(eps, c.servers[victim].grpcAddr)
	for i, s := range c.servers {
		if i != victim {
			eps = append(eps, s.grpcAddr)
		}
	}
	f := followFromZero(t, ctx, eps)
	load := startDDLLoad(t, ctx, eps[1:], "w", 4)
	for f.next() < 20 {
	}
	c.servers[victim].kill()
	for load.acked.Load() < 80 {
		f.next()
	}
	load.stop()
	var last uint64
	for i, s := range c.servers {
		if i != victim {
			r, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{})
			if err != nil {
				t.Fatal(err)
			}
			last = max(last, r.Epoch)
		}
	}
	f.readTo(last)
	if want := load.acked.Load() + 1; int64(len(f.got)) != want {
		t.Fatalf("%d epochs seen, want %d (the keyspace and %d acknowledged tables)", len(f.got), want, want-1)
	}
}

// followFromZero follows the feed from epoch 0 through a client of eps
// (client.Follow: it resumes on another endpoint when one fails), until
// the test ends.
func followFromZero(t *testing.T, ctx context.Context, eps []string) *epochFeed {
	t.Helper()
	watcher, err := client.New(client.Config{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	t.Cleanup(func() {
		stopWatch()
		watcher.Close()
	})
	from := uint64(0)
	return &epochFeed{t: t, feed: watcher.Follow(wctx, &pb.WatchRequest{FromEpoch: &from})}
}

// epochFeed reads a feed from epoch 0 (client.Follow) and keeps the
// epochs of its events, each once per message: an atomic change has
// several events of one epoch, all in one message.
type epochFeed struct {
	t    *testing.T
	feed <-chan client.WatchResult
	got  []uint64
}

// next reads one message, failing the test when the feed ends or is
// silent for 30 s, and returns the epoch it brings the feed to.
func (f *epochFeed) next() uint64 {
	f.t.Helper()
	select {
	case r, ok := <-f.feed:
		if !ok || r.Err != nil {
			f.t.Fatalf("feed ended: %v", r.Err)
		}
		for i, e := range r.Response.Events {
			if i == 0 || e.Epoch != r.Response.Events[i-1].Epoch {
				f.got = append(f.got, e.Epoch)
			}
		}
		return r.Response.Epoch
	case <-time.After(30 * time.Second):
		f.t.Fatalf("no message for 30s; %d epochs seen", len(f.got))
		return 0
	}
}

// readTo reads until the feed has brought an event of epoch last, and
// checks that it brought every epoch from 1 once, in order.
func (f *epochFeed) readTo(last uint64) {
	f.t.Helper()
	for len(f.got) == 0 || f.got[len(f.got)-1] < last {
		f.next()
	}
	for i, e := range f.got {
		if e != uint64(i+1) {
			f.t.Fatalf("epoch %d at position %d of the feed, want %d: every epoch once, in order (%d epochs)", e, i, i+1, len(f.got))
		}
	}
}
