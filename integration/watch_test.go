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
	watcher, err := client.New(client.Config{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	from := uint64(0)
	feed := watcher.Follow(wctx, &pb.WatchRequest{FromEpoch: &from})

	load := startDDLLoad(t, ctx, eps[1:], "w", 4)

	var got []uint64
	next := func() uint64 {
		select {
		case r, ok := <-feed:
			if !ok || r.Err != nil {
				t.Fatalf("feed ended: %v", r.Err)
			}
			for _, e := range r.Response.Events {
				got = append(got, e.Epoch)
			}
			return r.Response.Epoch
		case <-time.After(30 * time.Second):
			t.Fatalf("no message for 30s; %d epochs seen", len(got))
			return 0
		}
	}
	for next() < 20 {
	}
	c.servers[victim].kill()
	for load.acked.Load() < 80 {
		next()
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
	for len(got) == 0 || got[len(got)-1] < last {
		next()
	}
	for i, e := range got {
		if e != uint64(i+1) {
			t.Fatalf("epoch %d at position %d of the feed, want %d: every epoch once, in order (%d epochs)", e, i, i+1, len(got))
		}
	}
	if want := load.acked.Load() + 1; int64(len(got)) != want {
		t.Fatalf("%d epochs seen, want %d (the keyspace and %d acknowledged tables)", len(got), want, want-1)
	}
}
