package member

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
)

// TestProposeErrorSaysWhetherItMayApply: propose's last error is outcome
// unknown (DeadlineExceeded, with the request id and the index it would
// apply after) when an earlier attempt may be in the log or the last one
// may be, and otherwise keeps saying that nothing was proposed
// (Unavailable).
func TestProposeErrorSaysWhetherItMayApply(t *testing.T) {
	noLeader := fmt.Errorf("%w: %w", raftlog.ErrNoLeader, context.DeadlineExceeded)
	mayCommit := fmt.Errorf("raftlog: propose: %w: %w", raftlog.ErrOutcomeUnknown, context.DeadlineExceeded)
	for _, tc := range []struct {
		name    string
		entered bool
		err     error
		nothing bool // nothing was proposed
		unknown bool
		why     string
	}{
		{"no leader from the start", false, noLeader, true, false, ""},
		{"stopped before raft took it", false, raftlog.ErrStopped, true, false, ""},
		{"deadline before raft took it", false, fmt.Errorf("raftlog: propose: %w", context.DeadlineExceeded), true, false, ""},
		{"no leader after a leader change", true, noLeader, false, true, "had not applied when the request deadline passed with no leader known"},
		{"deadline on a leader without quorum", false, mayCommit, false, true, "the request deadline passed"},
		{"stopped after raft took it", false, fmt.Errorf("%w: %w", raftlog.ErrOutcomeUnknown, raftlog.ErrStopped), false, true, "this member stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := proposeError("r1", 41, tc.entered, tc.err)
			if got := notProposed(err); got != tc.nothing {
				t.Errorf("%v (%v): nothing proposed %v, want %v", err, kinds(err), got, tc.nothing)
			}
			var oe *OutcomeUnknownError
			if got := errors.As(err, &oe); got != tc.unknown || errors.Is(err, ErrOutcomeUnknown) != tc.unknown {
				t.Fatalf("%v: outcome unknown %v, want %v", err, got, tc.unknown)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%v does not wrap its cause %v", err, tc.err)
			}
			if !tc.unknown {
				return
			}
			if oe.RequestID != "r1" || oe.AppliedIndex != 41 {
				t.Errorf("request id %q, applied index %d; want r1, 41", oe.RequestID, oe.AppliedIndex)
			}
			for _, want := range []string{"request r1: outcome unknown", tc.why, "may still apply", "metalog request r1", "at most once"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestMembershipChangeOutcomeUnknown: a conf change that may still apply
// is outcome unknown, and says where to look; one that failed otherwise
// keeps its error.
func TestMembershipChangeOutcomeUnknown(t *testing.T) {
	err := membershipError("add member n4", fmt.Errorf("raftlog: add learner 4: %w: %w", raftlog.ErrOutcomeUnknown, context.DeadlineExceeded))
	var oe *OutcomeUnknownError
	if !errors.As(err, &oe) || oe.Change != "add member n4" || !strings.Contains(err.Error(), "add member n4: outcome unknown") || !strings.Contains(err.Error(), "metalog cluster status") {
		t.Errorf("unknown conf change: %s %v", kinds(err), err)
	}
	err = membershipError("add member n4", fmt.Errorf("raftlog: add learner 4: %w: %w", raftlog.ErrNoLeader, context.DeadlineExceeded))
	if !notProposed(err) || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("conf change without a leader: %s %v", kinds(err), err)
	}
}

// TestLeaderWithoutQuorumAnswersOutcomeUnknown: a DDL on a leader cut off
// from both followers is appended, the leader steps down, the retry finds
// no leader: the answer is outcome unknown (not Unavailable) with the
// request id. A DDL sent once no leader is known is Unavailable. After
// the partition heals, the first is not applied (the majority's new
// leader wrote over it), and so is the second; sending the first again
// under its id applies it once.
func TestLeaderWithoutQuorumAnswersOutcomeUnknown(t *testing.T) {
	c := startTestCluster(t, 3)
	leader := c.waitLeader(0, 1, 2)
	if _, err := c.exec(leader, 10*time.Second, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	var rest []int
	var restIDs []uint64
	for i := range c.members {
		if i != leader {
			rest, restIDs = append(rest, i), append(restIDs, c.ids[i])
		}
	}
	c.faults.Partition([]uint64{c.ids[leader]}, restIDs)
	lost := Request{Statements: "CREATE TABLE ks.lost (id int PRIMARY KEY)", RequestID: "lost-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err := c.members[leader].Writes().Execute(ctx, lost)
	cancel()
	var oe *OutcomeUnknownError
	if !errors.As(err, &oe) || !errors.Is(err, ErrOutcomeUnknown) || oe.RequestID != "lost-1" || oe.AppliedIndex == 0 {
		t.Fatalf("DDL on a leader without quorum: %s %v, want outcome unknown for lost-1", kinds(err), err)
	}

	deadline := time.Now().Add(20 * time.Second)
	for c.members[leader].core.node.Status().Leader != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the cut-off leader still knows a leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	_, err = c.members[leader].Writes().Execute(ctx, Request{Statements: "CREATE TABLE ks.refused (id int PRIMARY KEY)", RequestID: "refused-1"})
	cancel()
	if !notProposed(err) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("DDL with no leader known: %s %v, want nothing proposed", kinds(err), err)
	}

	c.waitLeader(rest...)
	c.faults.Heal()
	c.waitSameSchema()
	rctx := testContext(t)
	for _, id := range []string{"lost-1", "refused-1"} {
		got, err := c.members[leader].Reads().RequestOutcome(rctx, RequestQuery{ID: id, AfterIndex: oe.AppliedIndex})
		if err != nil || got.State != RequestNotApplied {
			t.Fatalf("outcome of %s: %+v, %v; want not applied", id, got, err)
		}
	}
	first, err := c.members[rest[0]].Writes().Execute(rctx, lost)
	if err != nil {
		t.Fatalf("lost-1 sent again: %v", err)
	}
	got, err := c.members[leader].Reads().RequestOutcome(rctx, RequestQuery{ID: "lost-1"})
	if err != nil || got.State != RequestApplied || got.Record.Outcome.Epoch != first.Epoch || !strings.Contains(got.Message, "applied at epoch") {
		t.Fatalf("outcome of lost-1 after it applied: %+v, %v; want applied at epoch %d", got, err, first.Epoch)
	}
	if again, err := c.members[leader].Writes().Execute(rctx, lost); err != nil || again.Epoch != first.Epoch {
		t.Fatalf("lost-1 once more: epoch %d, %v; want the first answer, epoch %d", again.Epoch, err, first.Epoch)
	}
}

// rememberedMetadata is metadata at epoch 50, index 100, remembering the
// given records under their ids, in order.
func rememberedMetadata(ids []string, recs []metadata.RequestRecord) *metadata.ClusterMetadata {
	md := &metadata.ClusterMetadata{Epoch: 50, Index: 100}
	for i, id := range ids {
		md.Requests, _ = md.Requests.Remember(id, recs[i])
	}
	return md
}

func createdIn(ks string, epoch, index uint64) metadata.RequestRecord {
	return metadata.RequestRecord{Index: index, Outcome: metadata.Outcome{Epoch: epoch,
		Results: []metadata.StatementResult{{Result: schema.Result{Kind: "CREATE TABLE", Keyspace: ks, Table: "t", Applied: true}, Epoch: epoch}}}}
}

// TestRequestOutcomeStates: applied, failed as it applied, not applied
// while nothing was forgotten, and what a scoped reader is told: only of
// requests whose statements all applied in its keyspaces, the rest (and
// unknown ids) answered alike.
func TestRequestOutcomeStates(t *testing.T) {
	failed := metadata.RequestRecord{Index: 12, Outcome: metadata.Outcome{Epoch: 3},
		Err: &metadata.StatementError{Position: 1, Total: 1, Err: &schema.Error{Statement: "CREATE TABLE", Object: "other.t", Reason: "table already exists", Code: schema.ErrAlreadyExists}}}
	md := rememberedMetadata([]string{"shop-1", "elsewhere-1", "failed-1"}, []metadata.RequestRecord{createdIn("shop", 1, 10), createdIn("other", 2, 11), failed})
	shopOnly := func(ks string) bool { return ks == "shop" }
	for _, tc := range []struct {
		id      string
		visible func(string) bool
		state   string
		message string
	}{
		{"shop-1", nil, RequestApplied, `request "shop-1" applied at epoch 1 (log index 10)`},
		{"failed-1", nil, RequestApplied, "failed when the log applied it at index 12 (epoch 3, unchanged): AlreadyExists"},
		{"never", nil, RequestNotApplied, `request "never" had not applied as of epoch 50 (log index 100)`},
		{"shop-1", shopOnly, RequestApplied, "applied at epoch 1"},
		{"elsewhere-1", shopOnly, RequestNotVisible, "a reader of your keyspaces"},
		{"failed-1", shopOnly, RequestNotVisible, "a reader of your keyspaces"},
		{"never", shopOnly, RequestNotVisible, "a reader of your keyspaces"},
	} {
		got := requestOutcome(md, RequestQuery{ID: tc.id, Visible: tc.visible})
		msg := got.Message
		if got.State == RequestApplied && got.Record.Err != nil {
			// The listener names the error's code: the member leaves
			// the message to it (FailedMessage).
			if msg != "" || !errors.Is(got.Record.Err, schema.ErrAlreadyExists) {
				t.Errorf("%s: message %q of a failed request, want none; error %v", tc.id, msg, got.Record.Err)
			}
			msg = got.FailedMessage("AlreadyExists")
		}
		if got.State != tc.state || !strings.Contains(msg, tc.message) || got.Epoch != 50 || got.Index != 100 {
			t.Errorf("%s (scoped %v): %s %q, want %s with %q", tc.id, tc.visible != nil, got.State, msg, tc.state, tc.message)
		}
		if tc.state == RequestNotVisible && strings.Contains(got.Message, "other") {
			t.Errorf("%s: the scoped answer names another keyspace: %q", tc.id, got.Message)
		}
	}
}

// TestRequestOutcomeOnceIdsWereForgotten: once the cluster remembers as
// many ids as it can, an id it does not hold is not known (it may have
// been forgotten), unless the asker knows the request would have applied
// after the oldest one remembered (AfterIndex).
func TestRequestOutcomeOnceIdsWereForgotten(t *testing.T) {
	md := &metadata.ClusterMetadata{Epoch: 20000, Index: 20000}
	for i := range metadata.MaxRememberedRequests + 5 {
		md.Requests, _ = md.Requests.Remember(fmt.Sprintf("id-%d", i), createdIn("shop", uint64(i+1), uint64(i+1)))
	}
	got := requestOutcome(md, RequestQuery{ID: "id-2"})
	if got.State != RequestNotKnown || got.OldestIndex != 6 || got.OldestEpoch != 6 || got.Remembered != metadata.MaxRememberedRequests ||
		!strings.Contains(got.Message, "go back to epoch 6 (log index 6): it never applied, or it applied before that and was forgotten") {
		t.Errorf("a forgotten id: %+v", got)
	}
	if got := requestOutcome(md, RequestQuery{ID: "lost", AfterIndex: 5}); got.State != RequestNotKnown {
		t.Errorf("an id proposed after index 5, before the oldest remembered (6): %s, want not known", got.State)
	}
	if got := requestOutcome(md, RequestQuery{ID: "lost", AfterIndex: 6}); got.State != RequestNotApplied {
		t.Errorf("an id proposed after index 6, the oldest remembered: %s, want not applied", got.State)
	}
	if got := requestOutcome(md, RequestQuery{ID: "id-7"}); got.State != RequestApplied {
		t.Errorf("a remembered id: %s", got.State)
	}
}
