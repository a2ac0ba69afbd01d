package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// fakeProposer is a raft node for the write path alone: it applies what
// is proposed to a real state machine, in order, one entry per proposal,
// or answers as its script says, and counts the calls.
type fakeProposer struct {
	sm *metadata.StateMachine

	mu sync.Mutex // guards the fields below
	// index is the raft index of the last entry applied.
	index uint64
	// proposals are the data of every Propose call, in order.
	proposals [][]byte
	// readIndexes counts the ReadIndex calls.
	readIndexes int
	// script answers the next Propose calls, one each, before the
	// default (apply, answer the outcome).
	script []fakeAnswer
	// onReadIndex, when set, runs in each ReadIndex call before it
	// returns: what this member learns of the log in that round.
	onReadIndex func()
}

// fakeAnswer is the scripted answer to one Propose: whether the entry
// applies (to the state machine) and the error the call returns instead
// of its outcome, when not nil.
type fakeAnswer struct {
	apply bool
	err   error
}

var _ proposer = (*fakeProposer)(nil)

// newFakeProposer returns a fake over a new state machine in a temporary
// dir, closed when the test ends.
func newFakeProposer(t *testing.T) *fakeProposer {
	t.Helper()
	sm, err := metadata.Open(metadata.Config{Dir: t.TempDir(), FlushWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sm.Close() })
	return &fakeProposer{sm: sm}
}

// Propose implements proposer.
func (p *fakeProposer) Propose(_ context.Context, data []byte) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.proposals = append(p.proposals, data)
	answer := fakeAnswer{apply: true}
	if len(p.script) > 0 {
		answer, p.script = p.script[0], p.script[1:]
	}
	var out metadata.Outcome
	var applyErr error
	if answer.apply {
		out, applyErr = p.applyLocked(data)
	}
	if answer.err != nil {
		return nil, answer.err
	}
	return out, applyErr
}

// applyLocked applies data as the next entry of the log.
func (p *fakeProposer) applyLocked(data []byte) (metadata.Outcome, error) {
	p.index++
	res, err := p.sm.Apply([]metadata.Entry{{Index: p.index, Data: data}})
	if err != nil {
		panic(fmt.Sprintf("fake proposer: the state machine failed to apply entry %d: %v", p.index, err))
	}
	return res[0].Outcome, res[0].Err
}

// ReadIndex implements proposer.
func (p *fakeProposer) ReadIndex(context.Context) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readIndexes++
	if p.onReadIndex != nil {
		p.onReadIndex()
	}
	return p.index, nil
}

// ClusterID implements proposer.
func (p *fakeProposer) ClusterID() uint64 { return 0xc1 }

// counts returns how many Propose and ReadIndex calls p took.
func (p *fakeProposer) counts() (proposals, readIndexes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.proposals), p.readIndexes
}

// fakeWrites returns the write service over p, with the config's defaults
// changed by mod (nil: none) and a NOSPACE alarm that finds free bytes.
func fakeWrites(t *testing.T, p *fakeProposer, mod func(*Config)) *Writes {
	t.Helper()
	cfg := Config{Name: "n1", DataDir: t.TempDir(), PeerAddr: "127.0.0.1:0"}
	if mod != nil {
		mod(&cfg)
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	return &Writes{node: p, sm: p.sm, cfg: &cfg, metrics: newMetrics(nil, false), logger: logger,
		space: newSpaceAlarm(cfg.DataDir, cfg.MinFreeSpaceBytes, func(string) (uint64, error) { return freeBytes(&cfg), nil }, logger)}
}

// freeBytes is plenty of free space for cfg's alarm.
func freeBytes(cfg *Config) uint64 { return cfg.MinFreeSpaceBytes + 1<<30 }

const fakeKeyspace = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

// TestWritesApplyAChange: Execute proposes a change once, without a
// ReadIndex round (the pre-check admitted it), and answers the outcome
// of its apply: the epoch and every statement's result.
func TestWritesApplyAChange(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	out, err := w.Execute(context.Background(), Request{RequestID: "r1", Statements: fakeKeyspace + "; CREATE TABLE shop.orders (id int PRIMARY KEY)"})
	if err != nil {
		t.Fatal(err)
	}
	if proposals, readIndexes := p.counts(); proposals != 1 || readIndexes != 0 {
		t.Errorf("%d proposals and %d ReadIndex rounds, want 1 and 0", proposals, readIndexes)
	}
	if cur := p.sm.Current(); out.Epoch != cur.Epoch || cur.Epoch == 0 {
		t.Errorf("outcome at epoch %d, the state machine at %d", out.Epoch, cur.Epoch)
	}
	if len(out.Results) != 2 || out.Results[0].Result.Kind != "CREATE KEYSPACE" || out.Results[1].Result.Table != "orders" || !out.Results[1].Result.Applied {
		t.Errorf("results %+v, want the keyspace and the table created", out.Results)
	}
	if _, ok := p.sm.Current().Schema.Table("shop", "orders"); !ok {
		t.Error("the table is not in the state machine's schema")
	}
	cmd, err := metadata.UnmarshalCommand(p.proposals[0])
	if err != nil || cmd.RequestID != "r1" || cmd.Cluster != 0 && cmd.Cluster != p.ClusterID() {
		t.Errorf("proposed %+v (%v), want request r1", cmd, err)
	}
}

// TestWritesPrecheckRefusalPaysAReadIndex: a request this member's state
// refuses is confirmed with one ReadIndex round, then refused with the
// pre-check's error; nothing is proposed.
func TestWritesPrecheckRefusalPaysAReadIndex(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	_, err := w.Execute(context.Background(), Request{Statements: "CREATE TABLE nowhere.t (id int PRIMARY KEY)"})
	var serr *metadata.StatementError
	if !errors.As(err, &serr) || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("err = %v, want the pre-check's refusal naming the keyspace", err)
	}
	if proposals, readIndexes := p.counts(); proposals != 0 || readIndexes != 1 {
		t.Errorf("%d proposals and %d ReadIndex rounds, want 0 and 1", proposals, readIndexes)
	}
	if epoch := p.sm.Current().Epoch; epoch != 0 {
		t.Errorf("epoch %d after a refusal, want 0", epoch)
	}
}

// TestWritesPrecheckBehindIsProposed: a request this member refuses only
// because it is behind (the keyspace was created a moment ago through
// another member) is admitted once the ReadIndex round brought the
// state up to date, and proposed.
func TestWritesPrecheckBehindIsProposed(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	p.onReadIndex = func() {
		// Another member's change, which this member applies in the round.
		if _, err := p.applyLocked(metadata.Command{RequestID: "elsewhere", Text: fakeKeyspace}.Marshal(nil)); err != nil {
			t.Errorf("the other member's change: %v", err)
		}
	}
	out, err := w.Execute(context.Background(), Request{Statements: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	if err != nil {
		t.Fatal(err)
	}
	if proposals, readIndexes := p.counts(); proposals != 1 || readIndexes != 1 {
		t.Errorf("%d proposals and %d ReadIndex rounds, want 1 and 1", proposals, readIndexes)
	}
	if out.Epoch != 2 || p.sm.Current().Epoch != 2 {
		t.Errorf("outcome at epoch %d, state machine at %d; want 2 (the keyspace, then the table)", out.Epoch, p.sm.Current().Epoch)
	}
}

// TestWritesLeaderChangeProposesAgain: a proposal that the leader change
// cut off (raftlog.ErrLeaderChanged) after it entered the log is
// proposed again, the same entry under the same request id (one the
// member gave the request, which came without one), and applies once.
func TestWritesLeaderChangeProposesAgain(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	p.script = []fakeAnswer{{apply: true, err: fmt.Errorf("raftlog: propose: %w", raftlog.ErrLeaderChanged)}}
	out, err := w.Execute(context.Background(), Request{Statements: fakeKeyspace})
	if err != nil {
		t.Fatal(err)
	}
	proposals, _ := p.counts()
	if proposals != 2 {
		t.Fatalf("%d proposals, want 2 (the first cut off by the leader change)", proposals)
	}
	first, err1 := metadata.UnmarshalCommand(p.proposals[0])
	again, err2 := metadata.UnmarshalCommand(p.proposals[1])
	if err1 != nil || err2 != nil || !strings.HasPrefix(first.RequestID, serverRequestIDPrefix) || again.RequestID != first.RequestID || string(p.proposals[0]) != string(p.proposals[1]) {
		t.Errorf("proposed %q then %q (%v, %v), want the same entry under one id the member gave", first.RequestID, again.RequestID, err1, err2)
	}
	if cur := p.sm.Current(); cur.Epoch != 1 || out.Epoch != 1 {
		t.Errorf("state machine at epoch %d, outcome at %d; want 1: the change applied once", cur.Epoch, out.Epoch)
	}
}

// TestWritesOutcomeUnknown: a proposal whose wait ends without an answer
// (the entry may still apply) fails with an error matching
// ErrOutcomeUnknown that names the request id; it is proposed once.
func TestWritesOutcomeUnknown(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	p.script = []fakeAnswer{{err: fmt.Errorf("raftlog: propose: %w: %w", raftlog.ErrOutcomeUnknown, context.DeadlineExceeded)}}
	_, err := w.Execute(context.Background(), Request{RequestID: "maybe-1", Statements: fakeKeyspace})
	var oe *OutcomeUnknownError
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.RequestID != "maybe-1" || !strings.Contains(err.Error(), "maybe-1") {
		t.Fatalf("err = %v, want the outcome unknown, naming request maybe-1", err)
	}
	if proposals, _ := p.counts(); proposals != 1 {
		t.Errorf("%d proposals, want 1", proposals)
	}
}

// TestWritesEntryTooLargeNotProposed: a change whose log entry is larger
// than max_mutation_size is refused before it is proposed.
func TestWritesEntryTooLargeNotProposed(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	if _, err := w.Execute(context.Background(), Request{Statements: fakeKeyspace}); err != nil {
		t.Fatal(err)
	}
	const limit = 4 << 10
	w.cfg.MaxMutationSize = limit
	// A small table whose statement is long: only its entry is large.
	_, err := w.Execute(context.Background(), Request{Statements: "CREATE TABLE shop.t (id int PRIMARY KEY) /* " + strings.Repeat("x", 2*limit) + " */"})
	if !errors.Is(err, ErrEntryTooLarge) || !strings.Contains(err.Error(), "max_mutation_size") {
		t.Fatalf("err = %v, want the entry refused as larger than max_mutation_size", err)
	}
	if proposals, _ := p.counts(); proposals != 1 {
		t.Errorf("%d proposals, want 1 (the keyspace alone)", proposals)
	}
	if epoch := p.sm.Current().Epoch; epoch != 1 {
		t.Errorf("epoch %d, want 1", epoch)
	}
}

// TestWritesNoSpaceNotProposed: while the NOSPACE alarm is raised a
// change is refused (ErrNoSpace) without being proposed.
func TestWritesNoSpaceNotProposed(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	w.space.free = func(string) (uint64, error) { return 0, nil }
	if w.space.check() == nil {
		t.Fatal("the alarm did not go off with no byte free")
	}
	_, err := w.Execute(context.Background(), Request{Statements: fakeKeyspace})
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want ErrNoSpace", err)
	}
	if proposals, _ := p.counts(); proposals != 0 {
		t.Errorf("%d proposals, want 0", proposals)
	}
	if epoch := p.sm.Current().Epoch; epoch != 0 {
		t.Errorf("epoch %d, want 0", epoch)
	}
}

// TestWritesRetryAnsweredFromRemembered: a request retried under the id of
// one that applied gets the first outcome from the state the member
// remembers, without proposing again.
func TestWritesRetryAnsweredFromRemembered(t *testing.T) {
	p := newFakeProposer(t)
	w := fakeWrites(t, p, nil)
	req := Request{RequestID: "r1", Statements: fakeKeyspace + "; CREATE TABLE shop.t (id int PRIMARY KEY)"}
	first, err := w.Execute(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.Execute(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if proposals, readIndexes := p.counts(); proposals != 1 || readIndexes != 0 {
		t.Errorf("%d proposals and %d ReadIndex rounds, want 1 and 0: the retry is answered from the state", proposals, readIndexes)
	}
	if again.Epoch != first.Epoch || len(again.Results) != len(first.Results) || p.sm.Current().Epoch != first.Epoch {
		t.Errorf("retry answered %+v, first %+v, state machine at epoch %d", again, first, p.sm.Current().Epoch)
	}
}
