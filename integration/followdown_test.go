package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// failovers records what a Follow's OnFailover hook is told, and when.
type failovers struct {
	mu      sync.Mutex // guards the fields below
	reports []client.WatchFailover
	// runStart is when the current run of failures with no message
	// between them began (its first report, Failures 1), last when its
	// latest came.
	runStart, last time.Time
}

func (f *failovers) hook(r client.WatchFailover) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reports = append(f.reports, r)
	f.last = time.Now()
	if r.Failures == 1 {
		f.runStart = f.last
	}
}

// get returns the reports so far and how long the current run of
// failures, with no message since its first, has gone on.
func (f *failovers) get() ([]client.WatchFailover, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reports) == 0 {
		return nil, 0
	}
	return slices.Clone(f.reports), f.last.Sub(f.runStart)
}

// TestFollowOutlastsTheWholeClusterDown: a client.Follow whose members are
// all killed goes on trying for longer than Config.Timeout, telling its
// OnFailover hook of each failure; once members are back it resumes from
// the last epoch it returned and sees every epoch exactly once, in order;
// it ends at once, with no error, when its context ends.
func TestFollowOutlastsTheWholeClusterDown(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eps := strings.Split(c.endpoints(), ",")
	ddl, err := client.New(client.Config{Endpoints: eps, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ddl.Close()
	exec := func(cql string) uint64 {
		t.Helper()
		r, err := ddl.Execute(ctx, &pb.ExecuteRequest{Statements: cql})
		if err != nil {
			t.Fatalf("%s: %v", cql, err)
		}
		return r.Epoch
	}
	exec(ksRF3)
	before := exec("CREATE TABLE ks.before (id int PRIMARY KEY)")

	const timeout = time.Second
	watcher, err := client.New(client.Config{Endpoints: eps, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	var log failovers
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	from := uint64(0)
	feed := watcher.Follow(wctx, &pb.WatchRequest{FromEpoch: &from}, client.WatchRetry{OnFailover: log.hook})
	var got []uint64
	receiveTo := func(epoch uint64) {
		t.Helper()
		for len(got) == 0 || got[len(got)-1] < epoch {
			select {
			case r, ok := <-feed:
				if !ok || r.Err != nil {
					t.Fatalf("Follow ended after epochs %v: %v", got, r.Err)
				}
				for _, e := range r.Response.Events {
					got = append(got, e.Epoch)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("no message for 60s; epochs so far %v, want up to %d", got, epoch)
			}
		}
	}
	receiveTo(before)

	for _, s := range c.servers {
		s.kill()
	}
	waitFor(t, 60*time.Second, "failures with no message between them for more than three times Config.Timeout", func() error {
		select {
		case r, ok := <-feed:
			if !ok || r.Err != nil {
				t.Fatalf("Follow ended while every member was down (open %v): %v", ok, r.Err)
			}
			if len(r.Response.Events) > 0 {
				t.Fatalf("events while every member was down: %v", r.Response)
			}
			return fmt.Errorf("a %s message at epoch %d", r.Response.Type, r.Response.Epoch)
		default:
		}
		if _, span := log.get(); span <= 3*timeout {
			return fmt.Errorf("failures with no message between them for %v", span)
		}
		return nil
	})
	for _, s := range c.servers[:2] { // a quorum
		s.startAsync()
	}
	for _, s := range c.servers[:2] {
		if err := s.readyErr(60 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	var last uint64
	for i := range 5 {
		last = exec(fmt.Sprintf("CREATE TABLE ks.after%d (id int PRIMARY KEY)", i))
	}
	receiveTo(last)
	for i, e := range got {
		if e != uint64(i+1) {
			t.Fatalf("epoch %d at position %d of the feed %v, want %d: every epoch once, in order", e, i, got, i+1)
		}
	}
	// The members die one after the other: the watch may move to one
	// still up and take a message there (a progress at the same epoch)
	// before it goes too, which starts the count of failures again.
	reports, _ := log.get()
	prev := 0
	for i, f := range reports {
		if !slices.Contains(eps, f.Endpoint) || status.Code(f.Err) != codes.Unavailable || f.Epoch != before || f.FromNow || (f.Failures != prev+1 && f.Failures != 1) {
			t.Errorf("failover %d: %+v, want an Unavailable of a member, going on after epoch %d, failure %d (or 1 after a message)", i, f, before, prev+1)
		}
		prev = f.Failures
	}

	// A message on its way as the context ends may still come; then the
	// channel closes, with no error.
	stopWatch()
	stop := time.After(10 * time.Second)
	for {
		select {
		case r, ok := <-feed:
			if !ok {
				return
			}
			if r.Err != nil {
				t.Fatalf("an error after the context ended: %v", r.Err)
			}
		case <-stop:
			t.Fatal("Follow still runs 10s after its context ended")
		}
	}
}
