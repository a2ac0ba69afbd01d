package raftlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/raft/v3/raftpb"
)

func TestConfigValidate(t *testing.T) {
	base := func() Config { return Config{ID: 1, Peers: peers(1), Dir: "d", Applier: &recorder{}} }
	tests := []struct {
		name    string
		mod     func(*Config)
		wantErr string
	}{
		{"defaults", func(*Config) {}, ""},
		{"zero id", func(c *Config) { c.ID = 0 }, "raftlog: id must be non-zero"},
		{"no dir", func(c *Config) { c.Dir = "" }, "raftlog: dir must be set"},
		{"no applier", func(c *Config) { c.Applier = nil }, "raftlog: applier must be set"},
		{"peers without id", func(c *Config) { c.Peers = peers(2, 3) }, "raftlog: peers ([2 3]) must include id (1)"},
		{"peer zero", func(c *Config) { c.Peers = peers(1, 0) }, "raftlog: peers ([1 0]) must not contain id 0"},
		{"duplicate peer", func(c *Config) { c.Peers = peers(1, 2, 2) }, "raftlog: peers ([1 2 2]) contain 2 twice"},
		{"learner peer", func(c *Config) { c.Peers = []Peer{{ID: 1}, {ID: 2, Learner: true}} },
			"raftlog: peers ([1 2]) must not contain learners: 2 is one (add it with AddLearner)"},
		{"negative tick", func(c *Config) { c.TickInterval = -time.Second }, "raftlog: tick interval (-1s) must be positive"},
		{"election not above heartbeat", func(c *Config) { c.ElectionTicks, c.HeartbeatTicks = 3, 5 },
			"raftlog: election ticks (3) must be greater than heartbeat ticks (5)"},
		{"election equal to default heartbeat", func(c *Config) { c.ElectionTicks = 1 },
			"raftlog: election ticks (1) must be greater than heartbeat ticks (1)"},
		{"join with peers", func(c *Config) { c.Join = true }, "raftlog: join must not be set together with peers ([1])"},
		{"join without peers", func(c *Config) { c.Join, c.Peers = true, nil }, ""},
		{"negative heartbeat", func(c *Config) { c.HeartbeatTicks = -1 }, "raftlog: heartbeat ticks (-1) must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mod(&c)
			err := c.validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				if c.TickInterval != 100*time.Millisecond || c.ElectionTicks != 10 || c.HeartbeatTicks != 1 ||
					c.Logger == nil || c.MaxSizePerMsg == 0 || c.MaxInflightMsgs == 0 {
					t.Errorf("defaults not filled: %+v", c)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("validate: err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestSingleNodePropose(t *testing.T) {
	app := &recorder{}
	n := startSingle(t, t.TempDir(), app, 0)
	waitReady(t, n)
	if !n.Caught() {
		t.Error("Caught() = false after Ready")
	}
	v, err := n.Propose(testContext(t), []byte("hello"))
	if err != nil {
		t.Fatalf("Propose: %v", err)
	}
	seen := app.seen()
	if len(seen) != 1 || string(seen[0].Data) != "hello" {
		t.Fatalf("applier saw %+v, want the one payload %q without header", seen, "hello")
	}
	if want := fmt.Sprintf("hello@%d", seen[0].Index); v != want {
		t.Errorf("Propose value = %v, want %v", v, want)
	}
	st := n.Status()
	if st.ID != 1 || st.Leader != 1 || st.Term == 0 || st.Commit < seen[0].Index || st.Applied < seen[0].Index ||
		!cmp.Equal(st.Voters, []uint64{1}) {
		t.Errorf("Status() = %+v", st)
	}
	// Status hands out a copy.
	st.Voters[0] = 99
	if n.Status().Voters[0] != 1 {
		t.Error("modifying Status().Voters changed the node's status")
	}
}

func TestProposeApplierError(t *testing.T) {
	n := startSingle(t, t.TempDir(), &recorder{}, 0)
	v, err := n.Propose(testContext(t), []byte("fail"))
	if !errors.Is(err, errTestFail) {
		t.Fatalf("Propose(fail) = %v, %v; want errTestFail", v, err)
	}
	// The node carries on.
	if _, err := n.Propose(testContext(t), []byte("ok")); err != nil {
		t.Fatalf("Propose after an applier error: %v", err)
	}
}

func TestProposeEmptyPayload(t *testing.T) {
	app := &recorder{}
	n := startSingle(t, t.TempDir(), app, 0)
	if _, err := n.Propose(testContext(t), nil); err != nil {
		t.Fatalf("Propose(nil): %v", err)
	}
	if seen := app.seen(); len(seen) != 1 || len(seen[0].Data) != 0 {
		t.Fatalf("applier saw %+v, want one empty payload", seen)
	}
}

func TestConcurrentProposals(t *testing.T) {
	app := &recorder{}
	n := startSingle(t, t.TempDir(), app, 0)
	const workers, each = 16, 25
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				payload := fmt.Sprintf("w%d-%d", w, i)
				v, err := n.Propose(ctx, []byte(payload))
				if err != nil {
					errs <- fmt.Errorf("%s: %w", payload, err)
					continue
				}
				if s, _ := v.(string); !strings.HasPrefix(s, payload+"@") {
					errs <- fmt.Errorf("%s: got the result %v of another entry", payload, v)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := app.seen()
	if len(seen) != workers*each {
		t.Fatalf("applier saw %d entries, want %d", len(seen), workers*each)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].Index <= seen[i-1].Index {
			t.Fatalf("entries out of order: %d after %d", seen[i].Index, seen[i-1].Index)
		}
	}
}

func TestRestartReplaysAfterApplied(t *testing.T) {
	dir := t.TempDir()
	app := &recorder{}
	n := startSingle(t, dir, app, 0)
	for i := range 10 {
		if _, err := n.Propose(testContext(t), fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	n.Stop()
	first := app.seen()
	if len(first) != 10 {
		t.Fatalf("first run applied %d entries, want 10", len(first))
	}

	// The state machine durably applied up to the 5th entry.
	app2 := &recorder{}
	n2 := startSingle(t, dir, app2, first[4].Index)
	waitReady(t, n2)
	if diff := cmp.Diff(first[5:], app2.seen()); diff != "" {
		t.Fatalf("replay after index %d (-want +got):\n%s", first[4].Index, diff)
	}
	// And the restarted node takes new proposals.
	v, err := n2.Propose(testContext(t), []byte("after"))
	if err != nil {
		t.Fatal(err)
	}
	seen := app2.seen()
	if last := seen[len(seen)-1]; string(last.Data) != "after" || last.Index <= first[9].Index || v != fmt.Sprintf("after@%d", last.Index) {
		t.Errorf("after restart: last entry %+v, value %v", last, v)
	}
	n2.Stop()

	// Restart with everything applied: nothing is replayed.
	app3 := &recorder{}
	n3 := startSingle(t, dir, app3, seen[len(seen)-1].Index)
	waitReady(t, n3)
	if got := app3.seen(); len(got) != 0 {
		t.Errorf("restart with all applied replayed %+v", got)
	}
}

func TestStartErrors(t *testing.T) {
	t.Run("applied beyond a new log", func(t *testing.T) {
		_, err := Start(Config{ID: 1, Peers: peers(1), Dir: t.TempDir(), Applier: &recorder{}, Applied: 5})
		if !errors.Is(err, ErrAppliedBeyondLog) {
			t.Fatalf("err = %v, want ErrAppliedBeyondLog", err)
		}
	})
	t.Run("new log without peers", func(t *testing.T) {
		_, err := Start(Config{ID: 1, Dir: t.TempDir(), Applier: &recorder{}})
		if err == nil || !strings.Contains(err.Error(), "peers must be set") {
			t.Fatalf("err = %v, want peers must be set", err)
		}
	})
	t.Run("locked", func(t *testing.T) {
		dir := t.TempDir()
		startSingle(t, dir, &recorder{}, 0)
		_, err := Start(Config{ID: 1, Peers: peers(1), Dir: dir, Applier: &recorder{}})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "raft log is locked by another process") {
			t.Fatalf("second Start on one dir: err = %v, want ErrLocked", err)
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		_, err := Start(Config{ID: 1, Peers: peers(1), Dir: t.TempDir(), Applier: &recorder{}, ElectionTicks: 3, HeartbeatTicks: 5})
		if err == nil || !strings.Contains(err.Error(), "election ticks (3)") {
			t.Fatalf("err = %v, want the election ticks error", err)
		}
	})
}

func TestProposePastDeadline(t *testing.T) {
	n := startSingle(t, t.TempDir(), &recorder{}, 0)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := n.Propose(ctx, []byte("late"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Propose with a past deadline: err = %v, want DeadlineExceeded", err)
	}
}

func TestProposeNoLeader(t *testing.T) {
	// One of three voters alone can never elect a leader.
	n, err := Start(Config{ID: 1, Peers: peers(1, 2, 3), Dir: t.TempDir(), Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = n.Propose(ctx, []byte("x"))
	if !errors.Is(err, ErrNoLeader) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Propose without a leader: err = %v, want ErrNoLeader and DeadlineExceeded", err)
	}
	if n.Caught() {
		t.Error("Caught() = true without a leader")
	}
}

func TestStopWhileWaitingForLeader(t *testing.T) {
	n, err := Start(Config{ID: 1, Peers: peers(1, 2, 3), Dir: t.TempDir(), Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := n.Propose(context.Background(), []byte("x"))
		done <- err
	}()
	n.Stop()
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("Propose across Stop: err = %v, want ErrStopped", err)
	}
}

func TestStopIdempotentAndAfter(t *testing.T) {
	n := startSingle(t, t.TempDir(), &recorder{}, 0)
	waitReady(t, n)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(n.Stop)
	}
	wg.Wait()
	n.Stop()
	if _, err := n.Propose(context.Background(), []byte("x")); !errors.Is(err, ErrStopped) {
		t.Errorf("Propose after Stop: err = %v, want ErrStopped", err)
	}
	hb := &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: new(uint64(2)), To: new(uint64(1))}
	if err := n.Step(context.Background(), hb); !errors.Is(err, ErrStopped) {
		t.Errorf("Step after Stop: err = %v, want ErrStopped", err)
	}
	if n.Caught() {
		t.Error("Caught() = true after Stop")
	}
	if err := n.Err(); err != nil {
		t.Errorf("Err() after a plain Stop = %v", err)
	}
}

func TestProposalHeaderRoundTrip(t *testing.T) {
	id := proposalID{node: 7, boot: 1 << 40, seq: 300}
	for _, payload := range [][]byte{nil, []byte("x"), make([]byte, 1000)} {
		data := encodeProposal(id, payload)
		gotID, gotPayload, err := decodeProposal(data)
		if err != nil || gotID != id || string(gotPayload) != string(payload) {
			t.Errorf("decode(encode(%v, %d bytes)) = %v, %d bytes, %v", id, len(payload), gotID, len(gotPayload), err)
		}
	}
	for _, bad := range [][]byte{nil, {}, {2, 1, 1, 1}, {headerVersion, 0x80}} {
		if _, _, err := decodeProposal(bad); err == nil {
			t.Errorf("decodeProposal(%v) succeeded", bad)
		}
	}
	data := encodeProposal(id, []byte("payload"))
	if allocs := testing.AllocsPerRun(100, func() { _, _, _ = decodeProposal(data) }); allocs != 0 {
		t.Errorf("decodeProposal: %v allocations, want 0", allocs)
	}
}

// TestRestartCommitBehindApplied covers a crash that lost the lazily
// written commit index while the state machine had durably applied more.
func TestRestartCommitBehindApplied(t *testing.T) {
	dir := t.TempDir()
	app := &recorder{}
	n := startSingle(t, dir, app, 0)
	for i := range 3 {
		if _, err := n.Propose(testContext(t), fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	n.Stop()
	applied := app.seen()[2].Index

	// Rewind the stored commit index, as a crash before the next fsync
	// would leave it.
	s, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs, _, _ := s.InitialState()
	if err := s.save(hardState(hs.GetTerm(), hs.GetVote(), 1), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	app2 := &recorder{}
	n2 := startSingle(t, dir, app2, applied)
	waitReady(t, n2)
	if st := n2.Status(); st.Commit < applied {
		t.Errorf("commit after restart = %d, want at least the applied %d", st.Commit, applied)
	}
	if _, err := n2.Propose(testContext(t), []byte("next")); err != nil {
		t.Fatal(err)
	}
	if seen := app2.seen(); len(seen) != 1 || string(seen[0].Data) != "next" {
		t.Errorf("after restart the applier saw %+v, want only the new entry", seen)
	}
}
