package api

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/member"
)

// TestLaggingWatchIsCutAndResumed: a watch whose consumer stops reading
// falls behind (the member's sends block once the stream's window is
// full), is cut with Unavailable, reason WATCH_LAGGING, naming the epoch
// to resume from, and client.Watch resumes it there: the consumer gets
// every epoch once, in order.
func TestLaggingWatchIsCutAndResumed(t *testing.T) {
	srv, c := startServerWith(t, func(s *testSettings) { s.member.WatchMaxLag = 20 })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	created, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.a (id int PRIMARY KEY)"})
	if err != nil {
		t.Fatal(err)
	}
	start := created.Epoch
	cl, err := client.New(client.Config{Endpoints: []string{srv.GRPCAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var mu sync.Mutex
	var cuts []error
	w, err := cl.Watch(ctx, &pb.WatchRequest{FromEpoch: &start}, client.WatchRetry{OnFailover: func(f client.WatchFailover) {
		mu.Lock()
		cuts = append(cuts, f.Err)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Not read while the epochs are made: a long comment makes each
	// event large enough to fill the stream's window. Requests of 10
	// statements: fewer than the bound, which a request of more epochs
	// than it would pass at once.
	const n = 1500
	comment := strings.Repeat("x", 2000)
	for done := 0; done < n; done += 10 {
		var b strings.Builder
		for i := range 10 {
			fmt.Fprintf(&b, "ALTER TABLE ks.a WITH comment = '%s%d';", comment, done+i)
		}
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: b.String()}); err != nil {
			t.Fatal(err)
		}
	}
	want := start + 1
	for want <= start+n {
		m, err := w.Recv()
		if err != nil {
			t.Fatalf("Recv after epoch %d: %v", want-1, err)
		}
		for _, e := range m.Events {
			if e.Epoch != want {
				t.Fatalf("event of epoch %d, want %d", e.Epoch, want)
			}
			want++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cuts) == 0 {
		t.Fatal("the watch was never cut")
	}
	st := status.Convert(cuts[0])
	if info := errorInfoOf(st); st.Code() != codes.Unavailable || info.GetReason() != "WATCH_LAGGING" || info.GetMetadata()["resume_epoch"] == "" {
		t.Fatalf("cut with %v, want Unavailable WATCH_LAGGING with resume_epoch", cuts[0])
	}
}

// The member's WatchLaggingError is answered with its reason and numbers.
func TestWatchLaggingStatus(t *testing.T) {
	err := toStatus(&member.WatchLaggingError{Resume: 7, Epoch: 100, MaxLag: 20})
	st := status.Convert(err)
	if st.Code() != codes.Unavailable {
		t.Fatalf("code %v, want Unavailable", st.Code())
	}
	info := errorInfoOf(st)
	if info.GetReason() != "WATCH_LAGGING" || info.GetMetadata()["resume_epoch"] != "7" || info.GetMetadata()["epoch"] != "100" || info.GetMetadata()["max_lag_epochs"] != "20" {
		t.Fatalf("ErrorInfo %v", info)
	}
}
