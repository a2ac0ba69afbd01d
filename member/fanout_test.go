package member

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLaggingFeedIsCut: a feed that reached the member's epoch and then
// falls more than WatchMaxLag epochs behind ends with a WatchLaggingError
// naming the last epoch it was sent, which matches ErrUnavailable (the
// client resumes it); a feed catching up from an old epoch is not cut.
func TestLaggingFeedIsCut(t *testing.T) {
	m := startMember(t, func(c *Config) { c.WatchMaxLag = 10 })
	execOK(t, m, Request{Statements: shopDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"})
	start := m.core.sm.Current().Epoch
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := make(chan struct{})
	var last atomic.Uint64
	done := make(chan error, 1)
	go func() {
		done <- m.Reads().Watch(ctx, WatchQuery{From: uptr(start)}, func(msg WatchMessage) error {
			<-gate
			last.Store(msg.Epoch)
			return nil
		})
	}()
	alters(t, m, 51) // the feed's first message waits on gate
	close(gate)
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the lagging feed was not cut")
	}
	var le *WatchLaggingError
	if !errors.As(err, &le) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("feed ended with %v, want a WatchLaggingError", err)
	}
	// Resume is the last epoch sent, or start when none was.
	if want := max(last.Load(), start); le.Resume != want || le.MaxLag != 10 || le.Epoch < start+51 {
		t.Fatalf("cut %+v, want resume at %d", le, want)
	}
	// Resuming from there catches up in batches, uncut.
	f := startFeed(t, m, WatchQuery{From: uptr(le.Resume)})
	if n := int(start + 51 - le.Resume); len(f.lines(t, n)) != n {
		t.Fatalf("resumed feed: want %d epochs", n)
	}
}

// fanoutMallocs runs w feeds from now on m, applies n ALTERs one request
// each, and returns the heap allocations made until every feed was sent
// the last epoch.
func fanoutMallocs(t *testing.T, m *Member, w, n int) uint64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	start := m.core.sm.Current().Epoch
	end := start + uint64(n)
	var reached sync.WaitGroup
	reached.Add(w)
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Reads().Watch(ctx, WatchQuery{From: uptr(start), Keyspace: "shop"}, func(msg WatchMessage) error {
				if msg.Type == WatchEvents && msg.Epoch == end {
					reached.Done()
				}
				return nil
			})
		}()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		execOK(t, m, Request{Statements: fmt.Sprintf("ALTER TABLE shop.a WITH comment = 'f%d'", i)})
	}
	waitGroup(t, &reached)
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// waitGroup waits for wg, bounded.
func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the feeds did not all reach the last epoch within 60s")
	}
}

// TestFanoutAllocationsFlatInWatchers: the feeds of one member at one
// epoch with one filter share the batch read from the history (and its
// encoding), so that eight times the feeds cost next to no more
// allocations per event: less than one per event and extra feed (a feed
// that read and filtered its own batch made several).
func TestFanoutAllocationsFlatInWatchers(t *testing.T) {
	const w, n = 50, 40
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"})
	fanoutMallocs(t, m, w, 5) // warm up
	small := fanoutMallocs(t, m, w, n)
	large := fanoutMallocs(t, m, 8*w, n)
	perEventSmall := float64(small) / float64(n*w)
	perEventLarge := float64(large) / float64(n*8*w)
	marginal := (float64(large) - float64(small)) / float64(n*7*w)
	t.Logf("allocations: %d feeds %d (%.2f per event and feed), %d feeds %d (%.2f), %.3f per event and extra feed",
		w, small, perEventSmall, 8*w, large, perEventLarge, marginal)
	if marginal >= 1 || perEventLarge > perEventSmall {
		t.Fatalf("allocations per event and feed grow with the feeds: %.2f with %d, %.2f with %d, %.3f per extra feed",
			perEventSmall, w, perEventLarge, 8*w, marginal)
	}
}

// TestSharedEncodingEncodesOnce: the senders of one shared message
// encode it once per key, however many there are at once.
func TestSharedEncodingEncodesOnce(t *testing.T) {
	var s SharedEncoding
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := s.Bytes("a", func() ([]byte, error) { calls.Add(1); return []byte("x"), nil })
			if err != nil || string(b) != "x" {
				t.Errorf("Bytes: %q, %v", b, err)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d encodings for one key, want 1", calls.Load())
	}
	b, _ := s.Bytes("b", func() ([]byte, error) { calls.Add(1); return []byte("y"), nil })
	if string(b) != "y" || calls.Load() != 2 {
		t.Fatalf("another key: %q after %d encodings, want y after 2", b, calls.Load())
	}
	var none *SharedEncoding
	if b, _ := none.Bytes("a", func() ([]byte, error) { return []byte("z"), nil }); string(b) != "z" {
		t.Fatalf("nil SharedEncoding: %q", b)
	}
}
